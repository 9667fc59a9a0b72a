//go:build unix

package printer

import (
	"os"
	"os/signal"
	"syscall"
)

// onResize redraws the live lines whenever the terminal's window changes size.
func (s *liveSink) onResize(stop chan struct{}) { onResize(stop, s.redraw) }

// onResize calls redraw whenever the terminal's window changes size, until stop closes.
func onResize(stop chan struct{}, redraw func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	defer signal.Stop(ch)
	for {
		select {
		case <-stop:
			return
		case <-ch:
			redraw()
		}
	}
}
