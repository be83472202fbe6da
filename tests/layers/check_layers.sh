#!/bin/sh
# check_layers.sh ROOT - enforce the one-way layering of
# docs/ARCHITECTURE.md ("Layers and includes"):
#
#   frontends -> ir -> passes -> plan -> runtime -> kernels
#
# autograd (src/autograd/) is a graph-to-graph transform beside the
# passes: it includes the IR and the passes, and nothing but the public
# API reaches it. train (src/train/, the training loop) sits on top of
# the public API like a tool: it includes only core/ (the allocator hook,
# errors, sized structs) and calls the rest through smelt.h.
#
# Data flows left to right; code depends the other way. Each stage
# includes the IR and the stages whose output it consumes, never a later
# stage (the IR never includes the passes, the plan or the runtime; the
# plan never the runtime). src/core/ is the base of every layer. Kernels,
# the far right, are the leaf: any layer past the frontends may call them
# (kernels/kernel.h, the registry), and they include only core/ and
# themselves: they never see the graph. Their one read of the IR is the
# op table's rows (ir/ops.def, plain X-macro data, the single source of
# truth), to declare their own entry points. tools/ and examples/ sit on
# top and include only smelt.h (and their own headers).
#
# Prints every offending include as FILE:LINE: ... and exits 1 when there
# is any.
root=${1:-.}
cd "$root" || exit 2

# allowed LAYER: the folders of src/ a file of LAYER may include.
allowed() {
    case $1 in
    core) echo "core" ;;
    kernels) echo "core kernels" ;;
    ir) echo "core kernels ir" ;;
    frontends) echo "core ir frontends" ;;
    passes) echo "core kernels ir passes" ;;
    autograd) echo "core kernels ir passes autograd" ;;
    plan) echo "core kernels ir plan" ;;
    runtime) echo "core kernels ir plan runtime" ;;
    train) echo "core train" ;;
    *) echo "" ;; # tools, examples: smelt.h only
    esac
}

bad=0
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT
grep -rn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' src tools examples \
    --include='*.c' --include='*.h' --include='*.def' >"$out"
[ -s "$out" ] || { echo "layers: no includes found under $root"; exit 2; }
while IFS= read -r hit; do
    file=${hit%%:*}
    rest=${hit#*:}
    line=${rest%%:*}
    header=$(printf '%s\n' "$rest" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
    target=${header%%/*}
    [ "$target" = "$header" ] && continue # its own folder, or smelt.h
    case $target in
    core | kernels | ir | frontends | passes | autograd | plan | runtime | train) ;;
    *) continue ;; # a header of its own subfolder
    esac
    from=$(printf '%s\n' "$file" | cut -d/ -f1)
    [ "$from" = src ] && from=$(printf '%s\n' "$file" | cut -d/ -f2)
    [ "$from" = kernels ] && [ "$header" = ir/ops.def ] && continue
    ok=0
    for a in $(allowed "$from"); do
        [ "$a" = "$target" ] && ok=1
    done
    if [ $ok = 0 ]; then
        may=$(allowed "$from")
        echo "$file:$line: $from includes $header ($from may include:" \
            "${may:-smelt.h only})"
        bad=1
    fi
done <"$out"
[ $bad = 0 ] && echo "layers: every include points one way"
exit $bad
