//go:build !linux

package sandbox

import (
	"errors"
	"io"
)

// TunnelNet is docker mode's network of a container; Linux only, as
// docker mode's mounts are.
type TunnelNet struct{}

// NewTunnelNet fails: no tunnel off Linux.
func NewTunnelNet([]Endpoint) (*TunnelNet, error) {
	return nil, errors.New("a container's endpoints need Linux")
}

func (n *TunnelNet) Routes() []Route                               { return nil }
func (n *TunnelNet) RelayArgs() []string                           { return nil }
func (n *TunnelNet) Serve(io.Reader, io.Writer) error              { return errors.ErrUnsupported }
func (n *TunnelNet) ServeReady(io.Reader, io.Writer, func()) error { return errors.ErrUnsupported }
func (n *TunnelNet) Close() error                                  { return nil }
