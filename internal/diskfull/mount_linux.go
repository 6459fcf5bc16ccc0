package diskfull

import (
	"fmt"
	"syscall"
)

func mount(dir string, size int) error {
	return syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size))
}

func unmount(dir string) error { return syscall.Unmount(dir, syscall.MNT_DETACH) }
