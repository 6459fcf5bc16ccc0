package cli

// The massgen command runs every config: it links every provider and
// docker mode (the Go library links a smaller default set; see providers/
// and sandbox/docker).
import (
	_ "github.com/massgen/massgen/providers/all"
	_ "github.com/massgen/massgen/sandbox/docker"
)
