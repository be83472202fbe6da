/*
 * lean.c - ModelProto bytes with the tensors' raw_data left where it is.
 *
 * protobuf-c copies every bytes field it unpacks, so a model unpacked
 * from its file's bytes holds its weights twice (the bytes and the
 * message's raw_data), and a third time while the graph's constants are
 * made. Before unpacking, the loader copies the message's bytes without
 * the payload of every raw_data field of SM_ONNX_RAW_REF_MIN bytes or
 * more (in any TensorProto, at any depth); in its place the copy holds a
 * reference: an unknown field numbered SM_ONNX_RAW_REF_FIELD whose 16
 * bytes are the payload's offset and length in the original bytes
 * (little-endian uint64s). load_tensor.c copies the payload from the
 * original bytes (the file's read-only mapping) straight into the
 * constant and then drops those pages, so the weights exist once.
 *
 * The copy is made from bytes that proto.c's walk() has checked (varints
 * and lengths well formed, nesting bounded), so reading them cannot fail.
 * A reference field the input already held in a TensorProto is dropped:
 * every reference the loader sees is one this file wrote.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "frontends/onnx/onnx_internal.h"

#define RAW_DATA_FIELD 9 /* TensorProto.raw_data */
#define REF_BYTES 16     /* offset and length */
/* Room a length prefix may take before the bytes it counts are known. */
#define PREFIX_ROOM 10

/* Writes v as a varint at o (when o is not NULL); returns its length. */
static size_t put_varint(uint8_t *o, uint64_t v)
{
    size_t k = 0;
    do {
        uint8_t b = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (o)
            o[k] = (uint8_t)(b | (v ? 0x80 : 0));
        k++;
    } while (v);
    return k;
}

/* Reads a varint that walk() has checked. */
static uint64_t get_varint(const uint8_t **p)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return r;
}

static void put_u64le(uint8_t *o, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        o[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64le(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Copies the fields of one message of type desc (NULL: a field the
 * schema does not know, copied as it is) from [p, end) to out, the large
 * raw_data payloads of TensorProtos replaced by references into base;
 * returns the bytes written. With out NULL it only counts them. A nested
 * message is written PREFIX_ROOM bytes further on, then moved back
 * behind its length prefix, so out needs that much room per nesting
 * level beyond the count. */
static size_t lean(const ProtobufCMessageDescriptor *desc, const uint8_t *base,
                   const uint8_t *p, const uint8_t *end, uint8_t *out)
{
    int tensor = desc == &onnx__tensor_proto__descriptor;
    size_t k = 0;
    while (p < end) {
        const uint8_t *field = p;
        uint64_t key = get_varint(&p), num = key >> 3;
        if ((key & 7) == PROTOBUF_C_WIRE_TYPE_VARINT)
            get_varint(&p);
        else if ((key & 7) == PROTOBUF_C_WIRE_TYPE_64BIT)
            p += 8;
        else if ((key & 7) == PROTOBUF_C_WIRE_TYPE_32BIT)
            p += 4;
        else { /* length-prefixed: walk() lets no other wire type through */
            uint64_t n = get_varint(&p);
            const uint8_t *body = p;
            p += n;
            if (tensor && num == SM_ONNX_RAW_REF_FIELD)
                continue;
            if (tensor && num == RAW_DATA_FIELD && n >= SM_ONNX_RAW_REF_MIN) {
                k += put_varint(out ? out + k : NULL,
                                (uint64_t)SM_ONNX_RAW_REF_FIELD << 3 |
                                    PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
                k += put_varint(out ? out + k : NULL, REF_BYTES);
                if (out) {
                    put_u64le(out + k, (uint64_t)(body - base));
                    put_u64le(out + k + 8, n);
                }
                k += REF_BYTES;
                continue;
            }
            const ProtobufCFieldDescriptor *f =
                desc && num <= UINT32_MAX
                    ? protobuf_c_message_descriptor_get_field(desc,
                                                              (unsigned)num)
                    : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                k += put_varint(out ? out + k : NULL, key);
                size_t m = lean(f->descriptor, base, body, p,
                                out ? out + k + PREFIX_ROOM : NULL);
                size_t pk = put_varint(out ? out + k : NULL, m);
                if (out)
                    memmove(out + k + pk, out + k + PREFIX_ROOM, m);
                k += pk + m;
                continue;
            }
        }
        if (out)
            memcpy(out + k, field, (size_t)(p - field));
        k += (size_t)(p - field);
    }
    return k;
}

smelt_status sm_onnx_lean_copy(smelt_ctx_t *ctx, const void *buf, size_t len,
                               void **out, size_t *out_len)
{
    const uint8_t *p = buf;
    const ProtobufCMessageDescriptor *d = &onnx__model_proto__descriptor;
    size_t n = lean(d, p, p, p + len, NULL);
    uint8_t *o = sm_malloc(n + PREFIX_ROOM * (SM_ONNX_MAX_MSG_DEPTH + 2));
    if (!o)
        return sm_err_nomem(ctx);
    size_t w = lean(d, p, p, p + len, o);
    SM_ASSERT(w == n);
    *out = o;
    *out_len = w;
    return SMELT_OK;
}

int sm_onnx_raw_ref(const Onnx__TensorProto *tp, uint64_t *off, uint64_t *len)
{
    int found = 0;
    /* the last one, as protobuf takes the last of a repeated scalar */
    for (unsigned i = 0; i < tp->base.n_unknown_fields; i++) {
        const ProtobufCMessageUnknownField *u = &tp->base.unknown_fields[i];
        if (u->tag != SM_ONNX_RAW_REF_FIELD ||
            u->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
            continue;
        /* protobuf-c keeps a length-prefixed field's prefix in its data */
        const uint8_t *d = u->data;
        if (u->len == REF_BYTES + 1 && d[0] == REF_BYTES)
            d++;
        else if (u->len != REF_BYTES)
            continue;
        *off = get_u64le(d);
        *len = get_u64le(d + 8);
        found = 1;
    }
    return found;
}
