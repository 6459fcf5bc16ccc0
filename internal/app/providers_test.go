package app

// app links no provider and not docker mode (a program links what it
// imports, see providers/ and sandbox/docker); its tests build teams of
// every backend type, in docker mode too.
import (
	_ "github.com/massgen/massgen/providers/all"
	_ "github.com/massgen/massgen/sandbox/docker"
)
