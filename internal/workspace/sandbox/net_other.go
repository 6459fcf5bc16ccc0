//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// Net: outside Linux there is no bubblewrap, so no network of a program's
// own.
type Net struct{ inside *os.File }

// NewNet fails outside Linux.
func NewNet(eps []Endpoint) (*Net, error) {
	return nil, errors.New("a sandboxed program's own network needs Linux")
}

// Routes are none.
func (n *Net) Routes() []Route { return nil }

// Close does nothing.
func (n *Net) Close() error { return nil }

func (n *Net) relayArgs(int) []string { return nil }

func (n *Net) exePath() string { return "" }
