// Package lock is the cluster-wide lock every istioctl command that writes takes first: a
// coordination.k8s.io/v1 Lease in kube-system, taken, renewed and judged expired by
// client-go's tools/leaderelection (a waiter takes over a lease it has seen go unrenewed
// for the lease duration by its own clock, never by comparing clocks; at most
// MaxLeaseDuration of it, whatever the holder wrote). Around the library
// it adds what a short-lived writer needs: who holds the lock and what for (the Lease's
// holderIdentity and annotations), a bounded wait that says whom it waits for, a wake-up
// as soon as the holder releases (a watch, not the next poll), a single-request release, a
// write fence (Held.Check) that refuses writes once the lease could have expired and gives
// each write its deadline (Held.Fence: a write still in flight then is cancelled), and the
// loss of the lock as an error instead of a silent re-acquisition. It decides nothing
// about installing.
package lock
