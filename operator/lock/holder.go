package lock

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// Where the lock is: one per cluster.
const (
	Namespace = "kube-system"
	Name      = "istioctl-lock"
)

// The annotations that say who holds the lock and what for, next to the Lease's
// holderIdentity (which names the holder uniquely: user, host, pid and start time).
const (
	annotationPrefix = "install.istio.io/lock-"
	annUser          = annotationPrefix + "user"
	annHost          = annotationPrefix + "host"
	annPID           = annotationPrefix + "pid"
	annCommand       = annotationPrefix + "command"
	annAction        = annotationPrefix + "action"
	annRevision      = annotationPrefix + "revision"
	annNamespace     = annotationPrefix + "namespace"
	annProfile       = annotationPrefix + "profile"
	annVersion       = annotationPrefix + "version"
	annStarted       = annotationPrefix + "started"
)

// Holder is who holds (or wants) the lock, and what for.
type Holder struct {
	// Identity is the Lease's holderIdentity: unique per run.
	Identity string
	User     string
	Host     string
	PID      int
	// Command is what was run ("istioctl upgrade"); Action what it does to the install
	// history ("install", "rollback", "uninstall", "tag").
	Command, Action string
	// Revision and Namespace name the install the run writes ("default" for the default
	// revision); its install records are in Namespace.
	Revision, Namespace string
	Profile             string
	// Version is the istioctl version.
	Version string
	Started time.Time

	// Acquired and Renewed are the Lease's times (by the holder's clock), Duration its
	// lease duration as waiters honour it (what it wrote, at most MaxLeaseDuration); only
	// for a holder read from a Lease.
	Acquired, Renewed time.Time
	Duration          time.Duration
}

// Self describes this process as a holder of the lock for a run.
func Self(command, action, revision, namespace, profile, version string) Holder {
	h := Holder{User: currentUser(), PID: os.Getpid(), Command: command, Action: action, Revision: revision,
		Namespace: namespace, Profile: profile, Version: version, Started: time.Now().UTC()}
	h.Host, _ = os.Hostname()
	if h.Host == "" {
		h.Host = "unknown-host"
	}
	h.Identity = fmt.Sprintf("%s@%s pid %d %s", h.User, h.Host, h.PID, h.Started.Format("2006-01-02T15:04:05.000Z"))
	return h
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "uid-" + strconv.Itoa(os.Getuid())
}

// String names the holder for people: what it runs, for which revision, who and where
// ("istioctl upgrade (revision canary) of alice@build-7, pid 4242").
func (h Holder) String() string {
	if h.User == "" || h.Host == "" {
		return strconv.Quote(h.Identity) // a holder without our annotations (not an istioctl?)
	}
	var b strings.Builder
	cmd := h.Command
	if cmd == "" {
		cmd = "istioctl"
	}
	b.WriteString(cmd)
	if h.Revision != "" {
		fmt.Fprintf(&b, " (revision %s)", h.Revision)
	}
	fmt.Fprintf(&b, " of %s@%s, pid %d", h.User, h.Host, h.PID)
	return b.String()
}

func (h Holder) annotations() map[string]string {
	a := map[string]string{
		annUser: h.User, annHost: h.Host, annPID: strconv.Itoa(h.PID), annCommand: h.Command, annAction: h.Action,
		annRevision: h.Revision, annNamespace: h.Namespace, annProfile: h.Profile, annVersion: h.Version,
		annStarted: h.Started.UTC().Format(time.RFC3339Nano),
	}
	for k, v := range a {
		if v == "" {
			delete(a, k)
		}
	}
	return a
}

// HolderOf reads the holder a Lease names; the zero Holder when it names none (free, or
// released). The annotations describe the holder only when they were written by the same
// run (their start time is part of the identity). Exported for tests that watch the Lease.
func HolderOf(l *coordinationv1.Lease) Holder {
	if l == nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return Holder{}
	}
	h := Holder{Identity: *l.Spec.HolderIdentity}
	if l.Spec.AcquireTime != nil {
		h.Acquired = l.Spec.AcquireTime.Time
	}
	if l.Spec.RenewTime != nil {
		h.Renewed = l.Spec.RenewTime.Time
	}
	if l.Spec.LeaseDurationSeconds != nil {
		h.Duration = Honoured(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)
	}
	a := l.Annotations
	started, _ := time.Parse(time.RFC3339Nano, a[annStarted])
	pid, _ := strconv.Atoi(a[annPID])
	described := Holder{Identity: h.Identity, User: a[annUser], Host: a[annHost], PID: pid, Command: a[annCommand], Action: a[annAction],
		Revision: a[annRevision], Namespace: a[annNamespace], Profile: a[annProfile], Version: a[annVersion], Started: started}
	if described.User != "" && strings.HasPrefix(h.Identity, described.User+"@"+described.Host+" pid "+a[annPID]+" ") {
		described.Acquired, described.Renewed, described.Duration = h.Acquired, h.Renewed, h.Duration
		return described
	}
	return h
}
