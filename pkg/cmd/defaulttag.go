package cmd

import (
	"sync"
	"time"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/install"
)

// tagLabels are the labels of the default tag's objects an install sets: its own (so an
// uninstall of the revision, or a purge, removes them) and the opt-out of its prune.
func tagLabels(owner install.Owner) map[string]string {
	l := owner.Labels(component.Pilot)
	l[install.LabelNotPruned] = "true"
	return l
}

// holdDone holds the done event of a successful run until release, so what the command
// does after the engine (setting the default revision tag) still comes before it.
type holdDone struct {
	event.Sink
	mu   sync.Mutex
	held *event.Event
}

func (h *holdDone) Emit(e event.Event) {
	if e.Type == event.Done && e.Error == "" {
		h.mu.Lock()
		h.held = &e
		h.mu.Unlock()
		return
	}
	h.Sink.Emit(e)
}

// release emits the held done event, as a failure when err is set.
func (h *holdDone) release(err error) {
	h.mu.Lock()
	e := h.held
	h.held = nil
	h.mu.Unlock()
	if e == nil {
		return
	}
	e.Time = time.Now()
	if err != nil {
		e.Error = err.Error()
		e.ExitCode = event.Code(event.ExitCode(err)) // 130 when the tag step was interrupted
	}
	h.Sink.Emit(*e)
}
