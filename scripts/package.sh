#!/usr/bin/env bash
# Builds the Debian package beacond_<version>_<arch>.deb for this machine's
# architecture: a release build with the Swift runtime linked in
# (--static-swift-stdlib, so the target needs no Swift), the files of dist/
# where Debian keeps them, Depends computed by dpkg-shlibdeps from what the
# binaries link, then lintian on the result (fails on an error).
#
#   scripts/package.sh [--prebuilt]     (--prebuilt: package the last release build, do not build)
#
# Version: what `beacond --version` says (Beacond.version in Sources/BeacondAPI),
# plus +git<commits>.<hash> in a git checkout (.dirty with uncommitted changes).
# Prints the package's path on stdout, everything else on stderr. Output: .build-package/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/.build-package
build=(swift build -c release --static-swift-stdlib)

prebuilt=false
case ${1:-} in
    --prebuilt) prebuilt=true ;;
    "") ;;
    *) echo "usage: scripts/package.sh [--prebuilt]" >&2; exit 2 ;;
esac

scripts/install-deps.sh --build dpkg-dev lintian binutils
if ! $prebuilt; then
    # Progress to stderr: stdout is the package's path alone.
    "${build[@]}" --product beacond >&2
    "${build[@]}" --product beaconctl >&2
fi
bin=$("${build[@]}" --show-bin-path)
executables=(beacond beaconctl)
for executable in "${executables[@]}"; do
    [[ -x $bin/$executable ]] || { echo "no $bin/$executable: run without --prebuilt" >&2; exit 1; }
    if objdump -p "$bin/$executable" | grep -q 'NEEDED *libswift\|NEEDED *libFoundation'; then
        echo "$bin/$executable links the Swift runtime dynamically: rebuild with ${build[*]}" >&2
        exit 1
    fi
done

version=$("$bin/beacond" --version)
if git rev-parse --git-dir >/dev/null 2>&1; then
    version+="+git$(git rev-list --count HEAD).$(git rev-parse --short=7 HEAD)"
    [[ -z $(git status --porcelain --untracked-files=no) ]] || version+=".dirty"
fi
arch=$(dpkg --print-architecture)
maintainer=$(sed -n 's/^Maintainer: //p' dist/debian/control)

stage=$out/stage
rm -rf "$stage" && mkdir -p "$stage/DEBIAN"
# Stripped as dh_strip strips (the dynamic symbols the runtime needs stay).
for executable in "${executables[@]}"; do
    install -D -m 0755 "$bin/$executable" "$stage/usr/bin/$executable"
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/$executable"
done
install -D -m 0644 dist/systemd/beacond.service "$stage/usr/lib/systemd/system/beacond.service"
install -D -m 0644 dist/sysusers.d/beacond.conf "$stage/usr/lib/sysusers.d/beacond.conf"
install -D -m 0644 dist/dbus-1/org.beacond.conf "$stage/usr/share/dbus-1/system.d/org.beacond.conf"
install -D -m 0644 dist/dbus-1/org.beacond.service "$stage/usr/share/dbus-1/system-services/org.beacond.service"
install -D -m 0644 -t "$stage/usr/share/dbus-1/interfaces" dist/dbus/*.xml
install -D -m 0644 beacons.yaml "$stage/etc/beacond/beacons.yaml"
install -D -m 0644 -t "$stage/etc/beacond/scenarios" scenarios/*.yaml
# Manual pages from the programs' own help (swift-argument-parser's
# generate-manual, built from the checkout SwiftPM made for the build).
manual=$out/argument-parser/release/generate-manual
swift build --package-path .build/checkouts/swift-argument-parser --scratch-path "$out/argument-parser" \
    -c release --product generate-manual >&2
mkdir -p "$stage/usr/share/man/man1"
for executable in "${executables[@]}"; do
    "$manual" "$bin/$executable" --date "$(git log -1 --format=%cs 2>/dev/null || date +%F)" --output-directory "$stage/usr/share/man/man1"
done
gzip -9n "$stage"/usr/share/man/man1/*.1
# Shell completions from the programs' own parsers, where Debian's bash,
# zsh and fish look for them (a completion file is sourced: no #! line).
for executable in "${executables[@]}"; do
    for shell in bash zsh fish; do
        case $shell in
            bash) file=$stage/usr/share/bash-completion/completions/$executable ;;
            zsh) file=$stage/usr/share/zsh/vendor-completions/_$executable ;;
            fish) file=$stage/usr/share/fish/vendor_completions.d/$executable.fish ;;
        esac
        mkdir -p "$(dirname "$file")"
        "$bin/$executable" --generate-completion-script "$shell" | sed '1{/^#!/d}' >"$file"
        chmod 0644 "$file"
    done
done
doc=$stage/usr/share/doc/beacond
install -D -m 0644 dist/debian/copyright "$doc/copyright"
# Not under /usr/share/doc, which images may leave out (dpkg path-exclude), and nothing may need.
install -D -m 0644 dist/systemd/beacond-mqtt.conf "$stage/usr/share/beacond/beacond-mqtt.conf"
{
    echo "beacond ($version) bookworm; urgency=medium"
    echo
    echo "  * Built from $(git describe --always --dirty 2>/dev/null || echo "a source tree without git") (scripts/package.sh)."
    echo
    echo " -- $maintainer  $(git log -1 --format=%cD 2>/dev/null || date -R)"
} | gzip -9n >"$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

# Every file under /etc is the admin's once installed: dpkg keeps their
# edits on upgrade and removes them on purge.
(cd "$stage" && find etc -type f -printf '/%p\n' | sort) >"$stage/DEBIAN/conffiles"
install -m 0755 dist/debian/postinst dist/debian/prerm dist/debian/postrm "$stage/DEBIAN/"
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"

# dpkg-shlibdeps reads a debian/control beside it; this one names the package only.
shlibs=$out/shlibs
rm -rf "$shlibs" && mkdir -p "$shlibs/debian"
printf 'Source: beacond\n\nPackage: beacond\nArchitecture: any\n' >"$shlibs/debian/control"
depends=$(cd "$shlibs" && dpkg-shlibdeps -O "${executables[@]/#/-e$stage/usr/bin/}" 2>"$shlibs/warnings" | sed -n 's/^shlibs:Depends=//p')
[[ -n $depends ]] || { cat "$shlibs/warnings" >&2; echo "dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# beacond's packed relocations (lld -z pack-relative-relocs, Package.swift) need
# glibc 2.36, a version no symbol names, so dpkg-shlibdeps cannot see it.
# Raised to 2.36 only: a build on a newer glibc may need more, and dpkg-shlibdeps says so.
computed=$(sed -nE 's/.*libc6 \(>= ([0-9.]+)\).*/\1/p' <<<"$depends")
if readelf -V "$stage/usr/bin/beacond" | grep -q GLIBC_ABI_DT_RELR && [[ -n $computed ]] && dpkg --compare-versions "$computed" lt 2.36; then
    depends=$(sed -E 's/libc6 \(>= [0-9.]+\)/libc6 (>= 2.36)/' <<<"$depends")
fi
echo "package: shlibs: $depends" >&2

size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@INSTALLED_SIZE@/$size/" -e "s/@SHLIBS@/$depends/" \
    dist/debian/control >"$stage/DEBIAN/control"

deb=$out/beacond_${version}_${arch}.deb
rm -f "$out"/beacond_*.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "package: $(basename "$deb"): $(du -k "$deb" | cut -f1) KiB, installed $size KiB" >&2
echo "package: lintian:" >&2
lintian --fail-on error --tag-display-limit 0 "$deb" >&2
echo "$deb"
