// Package event is the typed vocabulary the engine and the printers share: the events a run
// emits (operation, outcome, action and lock state as closed types), their JSON form (the
// -o json stream of docs/events.md, one place: MarshalJSON) and istioctl's exit codes. It
// has no behaviour beyond wording and checking its values.
package event
