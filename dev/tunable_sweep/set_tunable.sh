# Sourced by the scripts beside it: set_tunable SRC DST NAME=VALUE writes DST (SRC may be DST) as SRC with the
# declared tunable NAME's #define set to VALUE, as the built-in mutator sets one; returns 1, saying so on stderr,
# when SRC has no such #define line.
set_tunable() {
  local src="$1" dst="$2" name="${3%%=*}" value="${3#*=}"
  sed -E "s/^#define $name +[^ ]+ /#define $name $value /" "$src" > "$dst.tmp" && mv "$dst.tmp" "$dst" &&
    grep -q "^#define $name $value " "$dst" || { echo "set_tunable: $(basename "$src") declares no $name to set to $value" >&2; return 1; }
}
