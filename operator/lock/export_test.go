package lock

// Abandon stops renewing without releasing, as a killed holder does.
func (h *Held) Abandon() {
	h.e.stop()
	h.s.mu.Lock()
	h.s.released = true
	h.s.mu.Unlock()
}
