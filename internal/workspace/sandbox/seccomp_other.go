//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// seccompFile: bubblewrap, and so the sandbox, is Linux's.
func seccompFile() (*os.File, error) { return nil, errors.New("seccomp is Linux's") }
