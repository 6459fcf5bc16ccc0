//go:build !linux

package isolate

import "errors"

const oNoFollow = 0

func place(ws, name, stage, old string) error {
	return errors.New("write_mode isolation needs Linux (openat2), as the Guard does")
}
