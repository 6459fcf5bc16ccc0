package sandbox

import (
	"net/url"
	"strconv"
)

// SetTunnelPorts makes the relay listen on ports instead of the fixed
// ones: a relay run on the host in a test shares the host's loopback.
func SetTunnelPorts(n *TunnelNet, ports []int) {
	n.ports = ports
	for i, p := range ports {
		u, _ := url.Parse(n.routes[i].URL)
		u.Host = "127.0.0.1:" + strconv.Itoa(p)
		n.routes[i].URL = u.String()
	}
}
