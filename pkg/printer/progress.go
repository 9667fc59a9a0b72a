package printer

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/istioctl-installer/istioctl/operator/event"
)

// barSink prints what textSink prints, with one progress bar under the lines while a run is
// going. The bar counts each object twice: once applied, once its component is ready (the
// wait is most of an install's time). Its description names what is being waited on.
type barSink struct {
	mu   sync.Mutex
	text *textSink
	w    interface{ Write([]byte) (int, error) }
	bar  *progressbar.ProgressBar
	// left holds, per component, how many of its objects' ready steps are still to count.
	left    map[string]int
	waiting map[string]string
	// stop ends the ticker that keeps the elapsed time moving during long waits.
	stop chan struct{}
	// lock is the spinner shown while the run waits for the cluster lock, lockStop its ticker's end.
	lock     *progressbar.ProgressBar
	lockStop chan struct{}
}

// lockWaiting shows a spinner line under the waiting line, with the time waited, until the
// next event.
func (s *barSink) lockWaiting(e event.Event) {
	s.endLockWait()
	s.text.Emit(e)
	desc := "Waiting for the cluster lock"
	if e.Holder != "" {
		desc += ", held by " + truncate(e.Holder, 80)
	}
	s.lock = progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(s.w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)
	s.lockStop = make(chan struct{})
	go func(bar *progressbar.ProgressBar, stop chan struct{}) {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				s.mu.Lock()
				if s.lock == bar {
					_ = bar.Add(1)
				}
				s.mu.Unlock()
			}
		}
	}(s.lock, s.lockStop)
}

func (s *barSink) endLockWait() {
	if s.lock == nil {
		return
	}
	close(s.lockStop)
	_ = s.lock.Clear()
	_ = s.lock.Finish()
	s.lock = nil
}

func (s *barSink) tick(stop chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.mu.Lock()
			if s.bar != nil {
				_ = s.bar.RenderBlank()
			}
			s.mu.Unlock()
		}
	}
}

func (s *barSink) Emit(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Type == event.Lock && e.Status == "waiting" && s.bar == nil {
		s.lockWaiting(e)
		return
	}
	s.endLockWait()
	if e.Type == event.Plan && e.Total > 0 {
		verb := "Installing"
		if e.Status == "dry-run" {
			verb = "Checking"
		}
		s.left, s.waiting = map[string]int{}, map[string]string{}
		s.bar = progressbar.NewOptions(2*e.Total,
			progressbar.OptionSetWriter(s.w),
			progressbar.OptionSetDescription(verb),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
		)
		s.stop = make(chan struct{})
		go s.tick(s.stop)
		return
	}
	if s.bar == nil {
		s.text.Emit(e)
		return
	}
	// Lines go above the bar: clear it, print, draw it again.
	_ = s.bar.Clear()
	s.text.Emit(e)
	switch e.Type {
	case event.ComponentStarted:
		s.left[e.Component] = e.Total
	case event.Applied:
		_ = s.bar.Add(1)
	case event.Waiting:
		s.waiting[e.Component] = e.Object + ": " + e.Message
	case event.ComponentReady, event.ComponentFailed, event.ComponentSkipped:
		_ = s.bar.Add(s.left[e.Component])
		delete(s.left, e.Component)
		delete(s.waiting, e.Component)
	case event.Done:
		_ = s.bar.Finish()
		s.bar = nil
		close(s.stop)
		return
	}
	s.bar.Describe(s.describe())
	_ = s.bar.RenderBlank()
}

// describe names the components under way and the newest reason one is waiting on.
func (s *barSink) describe() string {
	var names []string
	for c := range s.left {
		names = append(names, c)
	}
	if len(names) == 0 {
		return "Installing"
	}
	sort.Strings(names)
	d := strings.Join(names, ", ")
	for _, c := range names {
		if why, ok := s.waiting[c]; ok {
			d = fmt.Sprintf("%s (waiting on %s)", d, truncate(why, 60))
			break
		}
	}
	return d
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
