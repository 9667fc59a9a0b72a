package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// shown is what a pod's status says of its istiod container.
type shown struct {
	ready    bool
	started  bool
	restarts int32
	state    corev1.ContainerState
	last     corev1.ContainerState
}

// want computes what the pod should show: its process's state, or ContainerCreating while
// it has none (its volumes are not there yet, or kwok has not started it).
func want(p *corev1.Pod, s *supervisor) shown {
	if s == nil || s.uid != string(p.UID) {
		return shown{state: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	}
	st := s.snapshot()
	out := shown{ready: st.Ready, started: st.Running, restarts: st.Restarts}
	switch {
	case st.Running:
		out.state.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(st.Started.Truncate(time.Second))}
	case st.BackingOff > 0:
		out.state.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", st.BackingOff, istiodContainer, p.Name, p.Namespace, p.UID)}
	default:
		out.state.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	if e := st.LastExit; e != nil {
		out.last.Terminated = &corev1.ContainerStateTerminated{ExitCode: int32(e.Code), Reason: e.Reason,
			StartedAt: metav1.NewTime(e.Started.Truncate(time.Second)), FinishedAt: metav1.NewTime(e.Finished.Truncate(time.Second))}
	}
	return out
}

// current reads what the pod shows now.
func current(p *corev1.Pod) shown {
	var out shown
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == istiodContainer {
			out = shown{ready: cs.Ready, started: cs.Started != nil && *cs.Started, restarts: cs.RestartCount, state: cs.State, last: cs.LastTerminationState}
		}
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func stateKey(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running " + s.Running.StartedAt.UTC().String()
	case s.Waiting != nil:
		return "waiting " + s.Waiting.Reason + " " + s.Waiting.Message
	case s.Terminated != nil:
		return "terminated " + strconv.Itoa(int(s.Terminated.ExitCode)) + s.Terminated.Reason
	}
	return ""
}

func same(a, b shown) bool {
	return a.ready == b.ready && a.started == b.started && a.restarts == b.restarts &&
		stateKey(a.state) == stateKey(b.state) && stateKey(a.last) == stateKey(b.last)
}

// syncStatus writes the pod's readiness and its istiod container's state when they differ
// from what it shows, and makes `kubectl logs` and port-forward reach the process.
func (c *controller) syncStatus(ctx context.Context, p *corev1.Pod, s *supervisor) error {
	w := want(p, s)
	if s != nil && s.uid == string(p.UID) {
		if err := c.ensureKwokObjects(ctx, p, s); err != nil {
			return err
		}
	}
	if p.Status.Phase != corev1.PodRunning || (same(w, current(p)) && podReady(p) == w.ready) {
		return nil
	}
	cond := corev1.ConditionFalse
	reason := "ContainersNotReady"
	if w.ready {
		cond, reason = corev1.ConditionTrue, ""
	}
	now := metav1.Now()
	var statuses []corev1.ContainerStatus
	for _, ctr := range p.Spec.Containers {
		var cs corev1.ContainerStatus
		for _, have := range p.Status.ContainerStatuses {
			if have.Name == ctr.Name {
				cs = have
			}
		}
		cs.Name, cs.Image = ctr.Name, ctr.Image
		if ctr.Name == istiodContainer {
			cs.Ready, cs.Started, cs.RestartCount = w.ready, &w.started, w.restarts
			cs.State, cs.LastTerminationState = w.state, w.last
		}
		statuses = append(statuses, cs)
	}
	patch := map[string]any{"status": map[string]any{
		"conditions": []map[string]any{
			{"type": "Ready", "status": cond, "reason": reason, "lastTransitionTime": now},
			{"type": "ContainersReady", "status": cond, "reason": reason, "lastTransitionTime": now},
		},
		"containerStatuses": statuses,
	}}
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, b, metav1.PatchOptions{FieldManager: "realistiod"}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil && podReady(p) != w.ready {
		log.Printf("%s/%s: ready=%v (%s)", p.Namespace, p.Name, w.ready, stateKey(w.state))
	}
	return err
}

var (
	logsGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "logs"}
	pfGVR   = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "portforwards"}
)

// ensureKwokObjects gives the pod kwok's Logs (its container's log is the process's) and
// PortForward (each container port reaches the process's loopback listener), owned by the
// pod so they go with it.
func (c *controller) ensureKwokObjects(ctx context.Context, p *corev1.Pod, s *supervisor) error {
	if c.crs[string(p.UID)] {
		return nil
	}
	owner := []any{map[string]any{"apiVersion": "v1", "kind": "Pod", "name": p.Name, "uid": string(p.UID)}}
	var forwards []any
	var ports []int
	for cp := range s.launch.Ports {
		ports = append(ports, int(cp))
	}
	sort.Ints(ports)
	for _, cp := range ports {
		host, port, _ := net.SplitHostPort(s.launch.Ports[int32(cp)])
		n, _ := strconv.Atoi(port)
		forwards = append(forwards, map[string]any{"ports": []any{int64(cp)}, "target": map[string]any{"address": host, "port": int64(n)}})
	}
	objs := []struct {
		gvr  schema.GroupVersionResource
		kind string
		spec map[string]any
	}{
		{logsGVR, "Logs", map[string]any{"logs": []any{map[string]any{"containers": []any{istiodContainer}, "logsFile": s.logPath, "follow": true}}}},
		{pfGVR, "PortForward", map[string]any{"forwards": forwards}},
	}
	for _, o := range objs {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": o.kind,
			"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace, "ownerReferences": owner},
			"spec":     o.spec,
		}}
		_, err := c.dynamic.Resource(o.gvr).Namespace(p.Namespace).Create(ctx, u, metav1.CreateOptions{FieldManager: "realistiod"})
		if apierrors.IsAlreadyExists(err) {
			_, err = c.dynamic.Resource(o.gvr).Namespace(p.Namespace).Apply(ctx, p.Name, u, metav1.ApplyOptions{FieldManager: "realistiod", Force: true})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s/%s: %w", o.kind, p.Namespace, p.Name, err)
		}
	}
	c.crs[string(p.UID)] = true
	return nil
}
