//go:build !unix

package server_test

import "time"

// cpuTime is not measured on this platform.
func cpuTime() time.Duration { return 0 }
