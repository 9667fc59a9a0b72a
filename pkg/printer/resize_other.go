//go:build !unix

package printer

// onResize: without SIGWINCH, each redraw (every redrawEvery) reads the width again.
func (s *liveSink) onResize(stop chan struct{}) {}

func onResize(stop chan struct{}, redraw func()) {}
