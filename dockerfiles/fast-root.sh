# Run once as root in a fresh worker container whose root file system is FUSE
# (Docker's fuse-overlayfs storage driver), before the agent starts; src/sandbox/docker/container.rs
# ships it (`bash -c`) when the daemon's storage driver is fuse-overlayfs.
#
# Why: on such a root, every path lookup that starts at "/" costs a round trip to the FUSE
# daemon for a caller that is not root (≈55 µs instead of ≈2 µs here: the kernel checks the
# search permission of the FUSE root node against fresh attributes each time). A Python
# test run does thousands of such lookups (imports), which made the non-root test user's
# pytest ≈0.2 s slower than root's. Other FUSE directories do not pay it.
#
# What: a small read-only tmpfs becomes the namespace's "/", holding a recursive bind mount
# of every top-level directory (and file) of the old root, and the old root's symlinks.
# Later `docker exec`s (the agent, as the test user) start in the new root: paths, contents,
# owners, modes and per-mount flags (read-only /sys, /proc/sys, ...) are all the same; only
# lookups of top-level names go through tmpfs instead of FUSE. Idempotent.
set -eu
new=/.swe-forge-root
root_fs=$(awk '$5 == "/" { for (i = 7; i <= NF; i++) if ($i == "-") { print $(i + 1); exit } }' /proc/self/mountinfo)
case "$root_fs" in
  fuse*) ;;
  *) echo "root is $root_fs: nothing to do"; exit 0 ;;
esac
mkdir -p "$new"
mount -t tmpfs -o mode=0755,size=1m,nosuid,nodev swe-forge-root "$new"
for path in /* /.[!.]*; do
  name=${path#/}
  [ "$name" = "${new#/}" ] && continue
  if [ -L "$path" ]; then
    ln -s "$(readlink "$path")" "$new/$name"
  elif [ -d "$path" ]; then
    mkdir "$new/$name"
    mount --rbind "$path" "$new/$name"
  elif [ -e "$path" ]; then
    : > "$new/$name"
    mount --bind "$path" "$new/$name"
  fi
done
mount -o remount,bind,ro "$new"
mount --rbind "$new" /
echo "root moved off $root_fs"
