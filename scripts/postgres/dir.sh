# Sourced by start.sh and stop.sh: where the throwaway cluster lives.
# Under target/pg; but as root the server runs as the system user
# `typed-tools-pg`, which may not traverse the checkout's parents (a
# checkout under /root, mode 700), so then it lives in /tmp, named after
# the target directory so that two checkouts keep two clusters.
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
if [ "$(id -u)" = 0 ]; then
    root="/tmp/typed-tools-pg-$(printf '%s' "$target" | cksum | cut -d' ' -f1)"
else
    root="$target/pg"
fi
