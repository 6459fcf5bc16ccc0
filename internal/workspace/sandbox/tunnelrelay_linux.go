package sandbox

import (
	"fmt"
	"net"
	"os"
	"strconv"
)

// tunnelArg, as the first argument, makes any program that links this
// package a container's relay (TunnelNet) instead of itself, as relayArg
// does for a sandboxed program.
const tunnelArg = "__massgen_sandbox_tunnel__"

func init() {
	if len(os.Args) > 1 && os.Args[1] == tunnelArg {
		os.Exit(tunnelMain(os.Args[2:]))
	}
}

// tunnelMain is the relay in a container: tunnelMain(PORT...) listens on
// 127.0.0.1:PORT for each endpoint and opens a stream over the tunnel on
// its standard input and output for each connection; it exits when its
// standard input ends (massgen let go of the container, or died).
func tunnelMain(ports []string) int {
	t := newTunnel(os.Stdout, nil)
	for i, p := range ports {
		if _, err := strconv.Atoi(p); err != nil {
			fmt.Fprintln(os.Stderr, "massgen relay: bad port", p)
			return 127
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "massgen relay:", err)
			return 127
		}
		go func(ep uint32) {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					s, err := t.open(ep)
					if err != nil {
						return
					}
					defer s.Close()
					pipe(c, s)
				}()
			}
		}(uint32(i))
	}
	if err := t.send(0, tunReady, nil); err != nil {
		return 1
	}
	t.run(os.Stdin)
	return 0
}
