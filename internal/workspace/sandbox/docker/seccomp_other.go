//go:build !linux

package docker

import "errors"

// offlineProfile: Docker's default profile is built for Linux hosts.
func offlineProfile() (string, error) { return "", errors.New("no seccomp profile outside Linux") }
