"""Everything the VM rig does differently per guest architecture, in one place:
the QEMU binary and machine flags, the console, the channel the results come
back on, the kernel package, the kernel modules the initramfs must carry, the
ELF machine of the binaries it packs and how the host runs the guest binary's
`--help`. Machine descriptions (configs/*.toml) and checks (checks.py and the
modules it imports) are shared by all architectures; nothing else in the rig
may branch on the architecture.

x86-64: `pc` machine, 8250 UARTs, results on the second one (ttyS1), ACPI
SRAT/SLIT/HMAT from QEMU.

arm64: `virt` machine with GICv3 and a Neoverse-N1 (plain `-cpu max` emulates
pointer authentication expensively and is 3-4x slower), NUMA nodes and
distances through the devicetree of a direct -kernel boot. `virt` has one
UART (the console), so the results go to a virtio console (hvc0), whose
drivers Debian builds as modules: the initramfs carries them from the kernel
package and init loads them. No HMAT: ACPI on arm64 needs UEFI firmware, and
with Debian 12's the guest loses its NUMA nodes, so HMAT stays an x86 check.
"""

import os
import shutil

# ELF e_machine values (elf.h).
EM_X86_64 = 62
EM_AARCH64 = 183


class Arch:
    def __init__(self, name, *, elf_machine, qemu, machine, machine_hmat, cpu_key, default_cpu,
                 console, results_dev, kernel_pkg_suffix, modules=(), help_runner=(),
                 timeout_factor=1.0, extra_args=(), kernel_args=""):
        self.name = name
        self.elf_machine = elf_machine
        self.qemu = qemu
        self.machine = machine
        # The -machine value when a configuration asks for HMAT, or None when
        # this architecture's guest cannot be given one (then the machine is
        # booted without, and the checks expect none).
        self.machine_hmat = machine_hmat
        # The configuration key that may name a -cpu model for this
        # architecture (models are per architecture), and the model used
        # when it does not.
        self.cpu_key = cpu_key
        self.default_cpu = default_cpu
        self.console = console
        # The guest device init writes the results to.
        self.results_dev = results_dev
        self.kernel_pkg_suffix = kernel_pkg_suffix
        # Kernel modules (paths below lib/modules/VERSION/kernel/) init loads,
        # in this order, before it opens results_dev.
        self.modules = list(modules)
        # Prefix that runs a binary of this architecture on the host (empty:
        # natively), for the rig's `numaprobe SUB --help` questions.
        self.help_runner = list(help_runner)
        # The hang guards (per check and per VM) are set for x86-64 guests;
        # TCG emulates another architecture more slowly, so they stretch by
        # this factor. A guard, never a performance limit.
        self.timeout_factor = timeout_factor
        # Kernel command-line words of this architecture, after the console
        # and panic=-1 (each with its leading space).
        self.kernel_args = kernel_args
        # Further QEMU arguments of this architecture's machine.
        self.extra_args = list(extra_args)

    @property
    def hmat(self):
        return self.machine_hmat is not None

    def kernel_package(self, x86_package):
        """The kernel package of this architecture with the same version as
        the x86 one scripts/vm/kernel-package names."""
        return x86_package.replace(X86_64.kernel_pkg_suffix, self.kernel_pkg_suffix)

    def qemu_base(self, cfg, hmat):
        a = [self.qemu, "-accel", cfg.accel,
             "-machine", self.machine_hmat if hmat else self.machine,
             "-nographic", "-no-reboot",
             # No network: the guest needs none.
             "-nic", "none"] + self.extra_args
        cpu = cfg.cpu_model or self.default_cpu
        if cpu:
            a += ["-cpu", cpu]
        return a

    def result_channel(self, results):
        """QEMU arguments that connect the guest's results_dev to the file
        `results`, after the console on stdio."""
        a = ["-serial", "mon:stdio"]
        if self.results_dev == "/dev/ttyS1":
            return a + ["-serial", f"file:{results}"]
        return a + ["-device", "virtio-serial-device",
                    "-chardev", f"file,id=results,path={results}",
                    "-device", "virtconsole,chardev=results"]

    def pack_modules(self, kernel, root):
        """Copy this architecture's modules from the unpacked kernel package
        (kernel = .../boot/vmlinuz-VERSION) into the initramfs at root;
        returns their guest paths in load order."""
        if not self.modules:
            return []
        kdir = os.path.dirname(os.path.dirname(os.path.abspath(kernel)))
        version = os.path.basename(kernel)[len("vmlinuz-"):]
        src = os.path.join(kdir, "lib", "modules", version, "kernel")
        dst = os.path.join(root, "lib", "modules")
        os.makedirs(dst, exist_ok=True)
        out = []
        for m in self.modules:
            path = os.path.join(src, m)
            if not os.path.exists(path):
                raise SystemExit(f"vm-test: {path} is missing: the {self.name} rig loads it "
                                 "for its results channel")
            shutil.copy(path, os.path.join(dst, os.path.basename(m)))
            out.append("/lib/modules/" + os.path.basename(m))
        return out


X86_64 = Arch(
    "x86_64", elf_machine=EM_X86_64, qemu="qemu-system-x86_64",
    machine="pc", machine_hmat="pc,hmat=on", cpu_key="cpu", default_cpu=None,
    console="ttyS0", results_dev="/dev/ttyS1", kernel_pkg_suffix="-cloud-amd64",
    # No display either; fewer devices (and option ROMs) boot faster. (`virt`
    # has no display device to begin with.)
    extra_args=("-vga", "none"),
    # On a loaded host TCG can miss the kernel's IO-APIC timer check, which
    # then panics before init ("IO-APIC + timer doesn't work"): the check
    # tests the emulator's speed, not the machine the rig builds.
    kernel_args=" no_timer_check")

AARCH64 = Arch(
    "aarch64", elf_machine=EM_AARCH64, qemu="qemu-system-aarch64",
    machine="virt,gic-version=3", machine_hmat=None, cpu_key="cpu_aarch64",
    default_cpu="neoverse-n1",
    console="ttyAMA0", results_dev="/dev/hvc0", kernel_pkg_suffix="-cloud-arm64",
    modules=("drivers/virtio/virtio_ring.ko", "drivers/virtio/virtio.ko",
             "drivers/virtio/virtio_mmio.ko", "drivers/char/virtio_console.ko"),
    # qemu-user runs --help well; it lacks mbind, so nothing that measures.
    help_runner=("qemu-aarch64-static",),
    # Measured on the shared 2-core CI machine under load: the study presets
    # of quartet-dual (8 vCPUs) took over 90 s on arm64, under 60 s on x86-64.
    timeout_factor=2.0)

ARCHES = {a.name: a for a in (X86_64, AARCH64)}
