# Sourced by Tests/RealStack/run.sh and Tests/Package/run.sh: what booting a
# qemu guest with Debian's own kernel takes (the kernel package, virtme-ng,
# qemu), cached in ROOT/.build-realstack/.
#
#   guest_prepare ROOT [PACKAGE...]   also installs the Debian PACKAGEs the caller needs
#
# On success sets guest_kernel (the kernel image), guest_abi and guest_venv
# (virtme-ng's venv: put its bin first in PATH); otherwise returns 1 with
# guest_problem saying why, for the caller to report as a skip.

# Pinned: the kernel the figures in docs/real-stack.md were taken with. If
# Debian has since replaced it (bookworm point releases do), the exact package
# the linux-image-amd64 metapackage names today is used instead, and said.
guest_abi=${REALSTACK_KERNEL:-6.1.0-56-amd64}
guest_virtme_ng_version=1.42

guest_prepare() {
    local root=$1 cache=$1/.build-realstack
    shift
    [[ $(uname -m) == x86_64 ]] || { guest_problem="the guest boots an amd64 Debian kernel; this machine is $(uname -m)"; return 1; }
    [[ $(uname -s) == Linux ]] || { guest_problem="needs Linux"; return 1; }
    local packages=(qemu-system-x86 python3-venv busybox-static kmod "$@") missing=() package
    for package in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if ((${#missing[@]})); then
        [[ $(id -u) -eq 0 ]] || { guest_problem="not root and missing ${missing[*]} (sudo apt-get install ${missing[*]})"; return 1; }
        echo "guest: installing ${missing[*]}" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
            { guest_problem="cannot install ${missing[*]}"; return 1; }
    fi
    command -v qemu-system-x86_64 >/dev/null || { guest_problem="qemu-system-x86_64 is not installed"; return 1; }
    [[ $(id -u) -eq 0 ]] || { guest_problem="the guest needs root to share a root filesystem, load modules and run daemons; run as root"; return 1; }

    mkdir -p "$cache"
    [[ -e $cache/kernel-abi ]] && guest_abi=$(cat "$cache/kernel-abi")
    local kernel_dir=$cache/linux-$guest_abi
    # One exact package name, never a glob (a glob pulls ~1.6 GB).
    if [[ ! -e $kernel_dir/boot/vmlinuz-$guest_abi ]]; then
        if ! (
            cd "$cache"
            # A machine whose package lists were never fetched knows no package yet.
            apt-get download "linux-image-$guest_abi" >/dev/null 2>&1 || apt-get update -qq
            if ! apt-get download "linux-image-$guest_abi" >/dev/null 2>download.log; then
                current=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: linux-image-\(.*-amd64\)$/\1/p' | head -1)
                [[ -n $current ]] || { cat download.log >&2; exit 1; }
                echo "guest: linux-image-$guest_abi is no longer in the archive; using linux-image-$current (set REALSTACK_KERNEL=$current and update qemu-guest.sh)" >&2
                echo "$current" >kernel-abi
                apt-get download "linux-image-$current" >/dev/null
            fi
        ); then
            guest_problem="cannot download the kernel package (no network?)"
            return 1
        fi
        [[ -e $cache/kernel-abi ]] && guest_abi=$(cat "$cache/kernel-abi") && kernel_dir=$cache/linux-$guest_abi
        local deb
        deb=$(ls "$cache"/linux-image-"${guest_abi}"_*.deb)
        rm -rf "$kernel_dir" && mkdir -p "$kernel_dir"
        dpkg-deb -x "$deb" "$kernel_dir" || { guest_problem="cannot unpack $deb"; return 1; }
        rm -f "$deb"
        # A kernel package carries no modules.dep: made here, so modprobe finds
        # the modules before any guest has booted (virtme-ng would make it then).
        depmod -b "$kernel_dir" "$guest_abi" || { guest_problem="depmod failed for $guest_abi"; return 1; }
    fi
    guest_kernel=$kernel_dir/boot/vmlinuz-$guest_abi

    # virtme-ng from PyPI, pinned, in a venv of Debian's python (vng execs virtme-run from PATH).
    guest_venv=$cache/venv
    if [[ ! -x $guest_venv/bin/vng ]]; then
        rm -rf "$guest_venv"
        /usr/bin/python3 -m venv "$guest_venv" || { guest_problem="cannot make a venv with /usr/bin/python3"; return 1; }
        "$guest_venv/bin/pip" install -q "virtme-ng==$guest_virtme_ng_version" ||
            { guest_problem="cannot install virtme-ng $guest_virtme_ng_version from PyPI"; return 1; }
    fi
    [[ -f $guest_kernel && -x $guest_venv/bin/vng ]] || { guest_problem="no kernel at $guest_kernel or no vng in $guest_venv"; return 1; }
}
