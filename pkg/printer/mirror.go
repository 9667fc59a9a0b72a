package printer

import (
	"fmt"
	"io"
	"sync"

	"github.com/schollz/progressbar/v3"

	"github.com/istioctl-installer/istioctl/operator/mirror"
)

// MirrorEvents prints x images mirror's events: one short line per image (plain), a
// progress bar on a terminal (lines for failures only), or one JSON object per event.
type MirrorEvents struct {
	w   io.Writer
	f   Format
	tty bool
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

// NewMirrorEvents prints to w in f; tty draws a progress bar.
func NewMirrorEvents(w io.Writer, f Format, tty bool) *MirrorEvents {
	return &MirrorEvents{w: w, f: f, tty: tty && f == Text}
}

type mirrorJSON struct {
	Event     string `json:"event"`
	Total     int    `json:"total,omitempty"`
	Source    string `json:"source,omitempty"`
	Target    string `json:"target,omitempty"`
	Digest    string `json:"digest,omitempty"`
	Platforms int    `json:"platforms,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Event prints one event.
func (p *MirrorEvents) Event(e mirror.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var j mirrorJSON
	var line string
	switch e := e.(type) {
	case mirror.Started:
		j = mirrorJSON{Event: "started", Total: e.Total}
		if p.tty {
			p.bar = progressbar.NewOptions(e.Total, progressbar.OptionSetWriter(p.w), progressbar.OptionSetDescription("mirroring"),
				progressbar.OptionShowCount(), progressbar.OptionSetWidth(20), progressbar.OptionClearOnFinish())
		}
	case mirror.Copied:
		j = mirrorJSON{Event: "copied", Source: e.Source, Target: e.Target, Digest: e.Digest, Platforms: e.Platforms}
		line = fmt.Sprintf("copied   %s -> %s (%s", e.Source, e.Target, short(e.Digest))
		if e.Platforms > 1 {
			line += fmt.Sprintf(", %d platforms", e.Platforms)
		}
		line += ")"
	case mirror.Skipped:
		j = mirrorJSON{Event: "skipped", Source: e.Source, Target: e.Target, Digest: e.Digest}
		line = fmt.Sprintf("present  %s (%s)", e.Target, short(e.Digest))
	case mirror.Planned:
		j = mirrorJSON{Event: "planned", Source: e.Source, Target: e.Target, Digest: e.Digest}
		line = fmt.Sprintf("would copy %s -> %s (%s)", e.Source, e.Target, short(e.Digest))
	case mirror.Failed:
		j = mirrorJSON{Event: "failed", Source: e.Source, Target: e.Target, Error: e.Err.Error()}
		line = fmt.Sprintf("FAILED   %s -> %s", e.Source, e.Target)
	}
	switch {
	case p.f == JSON || p.f == YAML:
		_ = encode(p.w, stream(p.f), j, encoding{})
	case p.tty:
		if _, failed := e.(mirror.Failed); failed {
			_ = p.bar.Clear()
			fmt.Fprintln(p.w, line)
		}
		if _, started := e.(mirror.Started); !started {
			_ = p.bar.Add(1)
		}
	case line != "":
		fmt.Fprintln(p.w, line)
	}
}

// MirrorResult prints the closing line of a mirror that finished.
func MirrorResult(w io.Writer, r mirror.Result, f Format) {
	if f == JSON || f == YAML {
		_ = encode(w, stream(f), map[string]any{"event": "done", "copied": r.Copied, "present": r.Skipped, "planned": r.Planned}, encoding{})
		return
	}
	if r.Planned > 0 {
		fmt.Fprintf(w, "dry run: %d image(s) to copy, %d already present\n", r.Planned, r.Skipped)
		return
	}
	fmt.Fprintf(w, "mirrored: %d copied, %d already present\n", r.Copied, r.Skipped)
}

func short(digest string) string {
	if len(digest) > 19 {
		return digest[:19]
	}
	return digest
}
