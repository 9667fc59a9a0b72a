package main

import (
	"errors"
	"fmt"
	"math"
	"net"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// launch is everything one istiod process is started with, derived from its pod alone
// (and the ConfigMaps and Secrets the pod reads): what a kubelet would give the container,
// mapped onto this host. It is pure data, so the mapping is tested without a cluster.
type launch struct {
	// Args follow the binary: the container's args with $(VAR) expanded, then the listen
	// flags moved onto loopback.
	Args []string
	// Env is the container's environment, resolved, with paths under a mount moved under
	// Root, and KUBECONFIG pointing at the process's own ServiceAccount credentials.
	Env []string
	// Files and Dirs are the mounted volumes' contents, relative to Root.
	Files map[string][]byte
	Dirs  []string
	// Tokens are projected ServiceAccount tokens to request and write, relative to Root.
	Tokens []projectedToken
	// Ports maps each container port the process listens on to where it really listens.
	Ports map[int32]string
	// Probe is the readiness probe's path and container port ("" when the container has
	// no HTTP readiness probe: ready once started).
	ProbePath string
	ProbePort int32
	// FailureThreshold is how many failed probes in a row make the pod NotReady.
	FailureThreshold int32
}

// projectedToken is a serviceAccountToken source of a projected volume.
type projectedToken struct {
	Path     string
	Audience string
	Seconds  int64
}

// sources reads what a pod's env and volumes refer to; found is false when the object or
// the key does not exist.
type sources interface {
	configMap(namespace, name string) (map[string][]byte, bool)
	secret(namespace, name string) (map[string][]byte, bool)
}

// errMountPending: a volume or env source the pod needs (not optional) does not exist yet;
// a kubelet keeps the container in ContainerCreating until it does.
var errMountPending = errors.New("waiting for a volume or env source")

// listenFlags are pilot-discovery's listeners and the container ports they default to.
// Each is moved onto a free loopback port; the bed's forwarders carry a Service's
// cluster IP and port to it.
var listenFlags = []struct {
	flag string
	port int32
}{
	{"httpAddr", 8080},
	{"httpsAddr", 15017},
	{"grpcAddr", 15010},
	{"secureGRPCAddr", 15012},
	{"monitoringAddr", 15014},
}

// deriveLaunch maps the pod's container onto this host: root is the directory standing
// for the container's filesystem root (the process's working directory, since istiod
// reads its certificates and tokens at paths relative to it), kubeconfig the process's own
// credentials, and freePort hands out loopback ports.
func deriveLaunch(pod *corev1.Pod, c *corev1.Container, src sources, root, kubeconfig string, freePort func() (int, error)) (*launch, error) {
	l := &launch{Files: map[string][]byte{}, Ports: map[int32]string{}, FailureThreshold: 3}
	env, err := resolveEnv(pod, c, src)
	if err != nil {
		return nil, err
	}
	mounts, err := mountVolumes(pod, c, src, l)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, kv := range env {
		vars[kv[0]] = kv[1]
	}
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		l.Args = append(l.Args, expand(a, vars))
	}
	// The image's entrypoint is pilot-discovery itself: a command naming it goes.
	if len(c.Command) > 0 && strings.HasSuffix(c.Command[0], "pilot-discovery") {
		l.Args = l.Args[1:]
	}
	for _, f := range listenFlags {
		port, on := flagPort(l.Args, f.flag, f.port)
		if !on {
			continue
		}
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		l.Ports[port] = addr
		l.Args = append(l.Args, "--"+f.flag+"="+addr)
	}
	// ControlZ listens on localhost:9876 by default: every istiod of the host would share it.
	p, err := freePort()
	if err != nil {
		return nil, err
	}
	l.Args = append(l.Args, "--ctrlz_port="+strconv.Itoa(p))

	kube := kubeconfig
	for _, kv := range env {
		name, value := kv[0], underRoot(kv[1], mounts, root)
		if name == "KUBECONFIG" {
			// The pod's own file first (a remote cluster's, when mounted), then the
			// ServiceAccount's credentials in place of the in-cluster config.
			kube = value + string(filepath.ListSeparator) + kubeconfig
			continue
		}
		l.Env = append(l.Env, name+"="+value)
	}
	l.Env = append(l.Env, "KUBECONFIG="+kube, "HOME="+root)
	if pr := c.ReadinessProbe; pr != nil && pr.HTTPGet != nil {
		l.ProbePath = pr.HTTPGet.Path
		l.ProbePort = containerPort(c, pr.HTTPGet.Port.IntVal, pr.HTTPGet.Port.StrVal)
		if pr.FailureThreshold > 0 {
			l.FailureThreshold = pr.FailureThreshold
		}
	}
	return l, nil
}

// flagPort finds the port a listen flag uses (its last value wins, as pflag does): the
// default when the flag is absent; on is false when it is set to "" (listener off).
func flagPort(args []string, flag string, def int32) (port int32, on bool) {
	val, set := "", false
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		if len(a) == len(args[i]) {
			continue // not a flag
		}
		if a == flag && i+1 < len(args) {
			val, set = args[i+1], true
			i++
		} else if v, ok := strings.CutPrefix(a, flag+"="); ok {
			val, set = v, true
		}
	}
	if !set {
		return def, true
	}
	if val == "" {
		return 0, false
	}
	_, ps, err := net.SplitHostPort(val)
	if err != nil {
		return def, true
	}
	n, err := strconv.Atoi(ps)
	if err != nil {
		return def, true
	}
	return int32(n), true
}

func containerPort(c *corev1.Container, num int32, name string) int32 {
	if name == "" {
		return num
	}
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// resolveEnv is the container's environment as a kubelet computes it: envFrom first, then
// env in order, $(VAR) expanded against what came before.
func resolveEnv(pod *corev1.Pod, c *corev1.Container, src sources) ([][2]string, error) {
	var out [][2]string
	vars := map[string]string{}
	set := func(k, v string) {
		if _, ok := vars[k]; ok {
			for i := range out {
				if out[i][0] == k {
					out[i][1] = v
				}
			}
		} else {
			out = append(out, [2]string{k, v})
		}
		vars[k] = v
	}
	for _, ef := range c.EnvFrom {
		var data map[string][]byte
		var found, optional bool
		switch {
		case ef.ConfigMapRef != nil:
			data, found = src.configMap(pod.Namespace, ef.ConfigMapRef.Name)
			optional = ef.ConfigMapRef.Optional != nil && *ef.ConfigMapRef.Optional
		case ef.SecretRef != nil:
			data, found = src.secret(pod.Namespace, ef.SecretRef.Name)
			optional = ef.SecretRef.Optional != nil && *ef.SecretRef.Optional
		}
		if !found && !optional {
			return nil, errMountPending
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			set(ef.Prefix+k, string(data[k]))
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, vars))
			continue
		}
		v, ok, err := envSource(pod, c, e.ValueFrom, src)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			set(e.Name, v)
		}
	}
	return out, nil
}

func envSource(pod *corev1.Pod, c *corev1.Container, from *corev1.EnvVarSource, src sources) (string, bool, error) {
	switch {
	case from.FieldRef != nil:
		v, err := podField(pod, from.FieldRef.FieldPath)
		return v, err == nil, err
	case from.ResourceFieldRef != nil:
		return resourceField(c, from.ResourceFieldRef), true, nil
	case from.ConfigMapKeyRef != nil:
		r := from.ConfigMapKeyRef
		data, found := src.configMap(pod.Namespace, r.Name)
		v, has := data[r.Key]
		if found && has {
			return string(v), true, nil
		}
		if r.Optional != nil && *r.Optional {
			return "", false, nil
		}
		return "", false, errMountPending
	case from.SecretKeyRef != nil:
		r := from.SecretKeyRef
		data, found := src.secret(pod.Namespace, r.Name)
		v, has := data[r.Key]
		if found && has {
			return string(v), true, nil
		}
		if r.Optional != nil && *r.Optional {
			return "", false, nil
		}
		return "", false, errMountPending
	}
	return "", false, nil
}

// podField reads a downward API field path of the pod.
func podField(pod *corev1.Pod, fp string) (string, error) {
	switch fp {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	}
	if k, ok := strings.CutPrefix(fp, "metadata.labels['"); ok {
		return pod.Labels[strings.TrimSuffix(k, "']")], nil
	}
	if k, ok := strings.CutPrefix(fp, "metadata.annotations['"); ok {
		return pod.Annotations[strings.TrimSuffix(k, "']")], nil
	}
	return "", fmt.Errorf("field %q is not supported by the bed", fp)
}

// resourceField is a container's request or limit in the selector's divisor. A limit the
// container does not set reads, as on a real node, the node's allocatable amount: the
// bed's nodes claim 32 CPUs, so CPU is capped at this host's.
func resourceField(c *corev1.Container, r *corev1.ResourceFieldSelector) string {
	kind, name, _ := strings.Cut(r.Resource, ".")
	list := c.Resources.Limits
	if kind == "requests" {
		list = c.Resources.Requests
	}
	q, ok := list[corev1.ResourceName(name)]
	divisor := r.Divisor
	if divisor.IsZero() {
		divisor.Set(1)
	}
	if !ok {
		if name == "cpu" {
			return strconv.Itoa(runtime.NumCPU())
		}
		return "0"
	}
	v := math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue()))
	if name == "cpu" && int(v) > runtime.NumCPU() {
		v = float64(runtime.NumCPU())
	}
	return strconv.FormatInt(int64(v), 10)
}

// expand replaces $(VAR) with VAR's value when defined, and $$ with $, as Kubernetes
// expands container args and env values.
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+end+1])
			}
			i += end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// underRoot moves a value naming a path under one of the container's mounts under root.
func underRoot(v string, mounts []string, root string) string {
	for _, m := range mounts {
		if v == m || strings.HasPrefix(v, strings.TrimSuffix(m, "/")+"/") {
			return filepath.Join(root, v)
		}
	}
	return v
}

// mountVolumes fills l.Files, l.Dirs and l.Tokens from the container's volume mounts and
// returns their mount paths.
func mountVolumes(pod *corev1.Pod, c *corev1.Container, src sources, l *launch) ([]string, error) {
	vols := map[string]*corev1.Volume{}
	for i := range pod.Spec.Volumes {
		vols[pod.Spec.Volumes[i].Name] = &pod.Spec.Volumes[i]
	}
	var mounts []string
	for _, m := range c.VolumeMounts {
		v := vols[m.Name]
		if v == nil {
			continue
		}
		mounts = append(mounts, m.MountPath)
		dir := strings.TrimPrefix(path.Clean(m.MountPath), "/")
		files, err := volumeFiles(pod, v, src, dir, l)
		if err != nil {
			return nil, err
		}
		l.Dirs = append(l.Dirs, dir)
		for p, b := range files {
			if m.SubPath != "" {
				if p == path.Join(dir, m.SubPath) {
					l.Files[dir] = b
				}
				continue
			}
			l.Files[p] = b
		}
		if m.SubPath != "" {
			l.Dirs = l.Dirs[:len(l.Dirs)-1]
		}
	}
	return mounts, nil
}

// volumeFiles is what a volume holds, keyed by path relative to the root.
func volumeFiles(pod *corev1.Pod, v *corev1.Volume, src sources, dir string, l *launch) (map[string][]byte, error) {
	out := map[string][]byte{}
	// mount copies a Secret's or ConfigMap's keys (all, or the items named) below dir; a
	// missing source that is not optional keeps the pod pending, as the kubelet does.
	mount := func(data map[string][]byte, found bool, optional *bool, items []corev1.KeyToPath) error {
		if !found && (optional == nil || !*optional) {
			return errMountPending
		}
		if len(items) == 0 {
			for k, b := range data {
				out[path.Join(dir, k)] = b
			}
			return nil
		}
		for _, it := range items {
			if b, ok := data[it.Key]; ok {
				out[path.Join(dir, it.Path)] = b
			}
		}
		return nil
	}
	var err error
	switch {
	case v.Secret != nil:
		data, found := src.secret(pod.Namespace, v.Secret.SecretName)
		err = mount(data, found, v.Secret.Optional, v.Secret.Items)
	case v.ConfigMap != nil:
		data, found := src.configMap(pod.Namespace, v.ConfigMap.Name)
		err = mount(data, found, v.ConfigMap.Optional, v.ConfigMap.Items)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			switch {
			case s.ServiceAccountToken != nil:
				secs := int64(3600)
				if s.ServiceAccountToken.ExpirationSeconds != nil {
					secs = *s.ServiceAccountToken.ExpirationSeconds
				}
				l.Tokens = append(l.Tokens, projectedToken{Path: path.Join(dir, s.ServiceAccountToken.Path), Audience: s.ServiceAccountToken.Audience, Seconds: secs})
			case s.ConfigMap != nil:
				data, found := src.configMap(pod.Namespace, s.ConfigMap.Name)
				err = mount(data, found, s.ConfigMap.Optional, s.ConfigMap.Items)
			case s.Secret != nil:
				data, found := src.secret(pod.Namespace, s.Secret.Name)
				err = mount(data, found, s.Secret.Optional, s.Secret.Items)
			case s.DownwardAPI != nil:
				downward(pod, s.DownwardAPI.Items, dir, out)
			}
			if err != nil {
				return nil, err
			}
		}
	case v.DownwardAPI != nil:
		downward(pod, v.DownwardAPI.Items, dir, out)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func downward(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, dir string, out map[string][]byte) {
	for _, it := range items {
		if it.FieldRef == nil {
			continue
		}
		var v string
		switch it.FieldRef.FieldPath {
		case "metadata.labels":
			v = keyValues(pod.Labels)
		case "metadata.annotations":
			v = keyValues(pod.Annotations)
		default:
			v, _ = podField(pod, it.FieldRef.FieldPath)
		}
		out[path.Join(dir, it.Path)] = []byte(v)
	}
}

func keyValues(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q\n", k, m[k])
	}
	return b.String()
}
