package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// A command without the network lives in its own network namespace, so
// TCP, UDP and abstract unix sockets reach nothing of the host. Unix
// sockets with a path do: one in a directory the sandbox shows (a context
// path holding docker.sock or a gpg-agent socket) connects to the host's
// service whatever the mount's read-only flag says. The kernel cannot be
// told "no socket files" by mounts, so the sandbox loads a seccomp filter
// (bwrap --seccomp) that refuses to create unix sockets at all, as Codex's
// Linux sandbox refuses network sockets; socketpair, which connects to
// nothing outside, still works. io_uring is refused too (its socket and
// connect operations would bypass the filter), and so are other syscall
// ABIs (x32, i386), whose socket calls the filter does not see.

// seccomp_data offsets and BPF opcodes (linux/seccomp.h, linux/filter.h).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits of args[0] on a little-endian machine

	bpfLdAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfRet   = unix.BPF_RET | unix.BPF_K

	retAllow = unix.SECCOMP_RET_ALLOW
	x32Bit   = 0x40000000 // __X32_SYSCALL_BIT
)

type sockFilter struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// nativeArch is the audit architecture of this build's syscalls, or 0
// where the filter is not written for it.
func nativeArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	return 0
}

func retErrno(errno unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(errno) }

// noUnixSockets is the filter program: socket(AF_UNIX, …) and io_uring
// fail with EACCES, foreign ABIs with EPERM, the rest is allowed.
func noUnixSockets() ([]sockFilter, error) {
	arch := nativeArch()
	if arch == 0 {
		return nil, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	p := []sockFilter{
		{bpfLdAbs, 0, 0, offArch},
		{bpfJeq, 1, 0, arch},
		{bpfRet, 0, 0, retErrno(unix.EPERM)},
		{bpfLdAbs, 0, 0, offNr},
	}
	if arch == unix.AUDIT_ARCH_X86_64 {
		p = append(p, sockFilter{bpfJge, 0, 1, x32Bit}, sockFilter{bpfRet, 0, 0, retErrno(unix.EPERM)})
	}
	return append(p,
		sockFilter{bpfJeq, 0, 1, unix.SYS_IO_URING_SETUP},
		sockFilter{bpfRet, 0, 0, retErrno(unix.EACCES)},
		sockFilter{bpfJeq, 0, 3, unix.SYS_SOCKET},
		sockFilter{bpfLdAbs, 0, 0, offArg0},
		sockFilter{bpfJeq, 0, 1, unix.AF_UNIX},
		sockFilter{bpfRet, 0, 0, retErrno(unix.EACCES)},
		sockFilter{bpfRet, 0, 0, retAllow},
	), nil
}

// seccompFile is the filter as bwrap reads it (--seccomp FD): the raw
// struct sock_filter array in a memory file, positioned at its start.
func seccompFile() (*os.File, error) {
	prog, err := noUnixSockets()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 8*len(prog))
	for _, f := range prog {
		b = binary.LittleEndian.AppendUint16(b, f.code)
		b = append(b, f.jt, f.jf)
		b = binary.LittleEndian.AppendUint32(b, f.k)
	}
	fd, err := unix.MemfdCreate("massgen-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	f := os.NewFile(uintptr(fd), "massgen-seccomp")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	return f, nil
}
