//go:build !linux

package workspace

import "errors"

var errUnsupported = errors.New("safe workspaces need Linux (openat2 with RESOLVE_BENEATH)")

func openBeneath(int, string, int) (int, error) { return -1, errUnsupported }

func fdPath(int) (string, error) { return "", errUnsupported }
