/*
 * conv_winograd.inc.h - the vector parts of Winograd F(4x4, 3x3) convolution
 * (conv_winograd.c), written once over a simd_*.h vocabulary and compiled per
 * ISA. Lanes are tiles: VL consecutive 4 x 4 output tiles of one tile row
 * are transformed together, so the 36 transformed values of each tile
 * land as contiguous vectors in the 36 GEMM operands.
 *
 *   input   V = B^T d B   (6 x 6 input patch d)
 *   output  Y = A^T M A   (4 x 4 output tile from the 6 x 6 product M)
 * with the matrices of Lavin and Gray, "Fast Algorithms for Convolutional
 * Neural Networks" (2016).
 */

/* B^T applied to 6 values in place. */
VINL void wino_bt(V *d)
{
    V d0 = d[0], d1 = d[1], d2 = d[2], d3 = d[3], d4 = d[4], d5 = d[5];
    V four = v_set1(4.0f), five = v_set1(5.0f), two = v_set1(2.0f);
    V a = v_fnma(four, d2, d4);      /* d4 - 4 d2 */
    V b = v_fnma(four, d1, d3);      /* d3 - 4 d1 */
    V c = v_sub(d4, d2);             /* d4 - d2 */
    V e = v_mul(two, v_sub(d3, d1)); /* 2 (d3 - d1) */
    d[0] = v_fnma(five, d2, v_fma(four, d0, d4));
    d[1] = v_add(a, b);
    d[2] = v_sub(a, b);
    d[3] = v_add(c, e);
    d[4] = v_sub(c, e);
    d[5] = v_fnma(five, d3, v_fma(four, d1, d5));
}

/* A^T applied to 6 values, giving 4. */
VINL void wino_at(const V *m, V *o)
{
    V s12 = v_add(m[1], m[2]), d12 = v_sub(m[1], m[2]);
    V s34 = v_add(m[3], m[4]), d34 = v_sub(m[3], m[4]);
    o[0] = v_add(v_add(m[0], s12), s34);
    o[1] = v_fma(v_set1(2.0f), d34, d12);
    o[2] = v_fma(v_set1(4.0f), s34, s12);
    o[3] = v_add(v_fma(v_set1(8.0f), d34, d12), m[5]);
}

VINL V wino_ld(const float *p, int64_t cnt)
{
    return cnt >= VL ? v_load(p) : v_loadn(p, cnt);
}

VINL void wino_st(float *p, V v, int64_t cnt)
{
    if (cnt >= VL)
        v_store(p, v);
    else
        v_storen(p, v, cnt);
}

/*
 * Input transform of n tiles of one tile row. rows[i] (i < 6) is input
 * row i of the tiles, zero-padded and split into 4 phases of L floats
 * (phase q holds padded[4 j + q]), so patch element (i, j) of tile k is
 * rows[i][(j % 4) * L + j / 4 + k]. Value xi = 6 i + j of tile k goes to
 * v[xi * vstride + k].
 */
static void wino_in(const float *const *rows, int64_t L, float *v,
                    int64_t vstride, int64_t n)
{
    for (int64_t k = 0; k < n; k += VL) {
        int64_t cnt = n - k;
        V t[6][6];
        for (int j = 0; j < 6; j++) {
            V col[6];
            for (int i = 0; i < 6; i++)
                col[i] = wino_ld(rows[i] + (j % 4) * L + j / 4 + k, cnt);
            wino_bt(col);
            for (int i = 0; i < 6; i++)
                t[i][j] = col[i];
        }
        for (int i = 0; i < 6; i++) {
            wino_bt(t[i]);
            for (int j = 0; j < 6; j++)
                wino_st(v + (6 * i + j) * vstride + k, t[i][j], cnt);
        }
    }
}

/*
 * Output transform of n tiles of one tile row: product value xi of tile k
 * is z[xi * zstride + k]; output (i, j) of tile k goes to
 * out[i * ostride + 4 k + j] (four rows of 4 n floats).
 */
static void wino_out(const float *z, int64_t zstride, float *out,
                     int64_t ostride, int64_t n)
{
    float tmp[4][VL];
    for (int64_t k = 0; k < n; k += VL) {
        int64_t cnt = n - k < VL ? n - k : VL;
        V t[6][4];
        for (int j = 0; j < 6; j++) {
            V col[6], o[4];
            for (int i = 0; i < 6; i++)
                col[i] = wino_ld(z + (6 * i + j) * zstride + k, cnt);
            wino_at(col, o);
            for (int i = 0; i < 4; i++)
                t[j][i] = o[i];
        }
        for (int i = 0; i < 4; i++) {
            V row[6], o[4];
            for (int j = 0; j < 6; j++)
                row[j] = t[j][i];
            wino_at(row, o);
            for (int j = 0; j < 4; j++)
                v_store(tmp[j], o[j]);
            float *d = out + i * ostride + 4 * k;
            for (int64_t l = 0; l < cnt; l++)
                for (int j = 0; j < 4; j++)
                    d[4 * l + j] = tmp[j][l];
        }
    }
}
