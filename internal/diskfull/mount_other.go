//go:build !linux

package diskfull

import (
	"errors"
	"testing"
)

func mount(string, string) error { return errors.New("tmpfs is Linux's") }

func unmount(string) error { return nil }

func runInNamespace(testing.TB) (bool, error) { return false, nil }

func available(string) (int64, error) { return 0, errors.New("no statfs here") }
