package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// OptOutLabel on a pod (values.pilot.podLabels) leaves it to kwok, which marks it Ready at
// once, as before the bed ran istiod: for tests that install many control planes and look
// only at the objects.
const OptOutLabel = "istioctl.test/real-istiod"

// istiodContainer names the container the bed runs for real: istiod's pods run
// pilot-discovery in a container named "discovery", whatever chart rendered them.
const istiodContainer = "discovery"

// forwardersKey is the queue's key for the Services' forwarders; the others are pods'.
const forwardersKey = "forwarders"

// controller runs an istiod process for each pod of an istiod workload, as a kubelet runs
// its container, and carries each Service that selects such pods from its cluster IP to
// the processes behind it.
type controller struct {
	client  kubernetes.Interface
	dynamic dynamic.Interface
	cfg     *rest.Config
	caFile  string
	binary  string
	state   string
	ports   *portPool // nil: the kernel chooses istiod's ports

	pods       corelisters.PodLister
	services   corelisters.ServiceLister
	secrets    corelisters.SecretLister
	configMaps corelisters.ConfigMapLister
	synced     []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
	// sups and fwds are touched by the single worker only.
	sups   map[string]*supervisor // namespace/pod -> its process
	fwds   *forwarders
	crs    map[string]bool // pods whose kwok Logs/PortForward objects exist
	tokens map[string]time.Time

	keysMu sync.Mutex
	keys   []string // sups' keys, for the informers' handlers
}

func newController(client kubernetes.Interface, dyn dynamic.Interface, cfg *rest.Config, binary, state string) (*controller, informers.SharedInformerFactory, error) {
	f := informers.NewSharedInformerFactory(client, 0)
	pods := f.Core().V1().Pods()
	c := &controller{
		client: client, dynamic: dyn, cfg: cfg, binary: binary, state: state,
		pods:       pods.Lister(),
		services:   f.Core().V1().Services().Lister(),
		secrets:    f.Core().V1().Secrets().Lister(),
		configMaps: f.Core().V1().ConfigMaps().Lister(),
		queue:      workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		sups:       map[string]*supervisor{},
		fwds:       newForwarders(),
		crs:        map[string]bool{},
		tokens:     map[string]time.Time{},
	}
	onPod := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok && (podKey(p) != "" || c.has(p)) {
			c.queue.Add(p.Namespace + "/" + p.Name)
		}
	}
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandlerFuncs
	}{
		{pods.Informer(), cache.ResourceEventHandlerFuncs{AddFunc: onPod, UpdateFunc: func(_, o any) { onPod(o) }, DeleteFunc: onPod}},
		{f.Core().V1().Services().Informer(), everyChange(func(any) { c.queue.Add(forwardersKey) })},
		{f.Core().V1().Secrets().Informer(), everyChange(c.enqueueNamespace)},
		{f.Core().V1().ConfigMaps().Informer(), everyChange(c.enqueueNamespace)},
	}
	for _, h := range handlers {
		if _, err := h.inf.AddEventHandler(h.h); err != nil {
			return nil, nil, err
		}
		c.synced = append(c.synced, h.inf.HasSynced)
	}
	return c, f, nil
}

func everyChange(f func(any)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{AddFunc: f, UpdateFunc: func(_, o any) { f(o) }, DeleteFunc: f}
}

// enqueueNamespace re-syncs the processes of the namespace a Secret or ConfigMap changed in
// (their volumes may show it).
func (c *controller) enqueueNamespace(obj any) {
	m, err := meta(obj)
	if err != nil {
		return
	}
	for _, k := range c.running() {
		if strings.HasPrefix(k, m.GetNamespace()+"/") {
			c.queue.Add(k)
		}
	}
}

// running lists the pods with a process; has says whether p is one. The queue's worker
// owns sups: these read a copy of its keys.
func (c *controller) running() []string {
	c.keysMu.Lock()
	defer c.keysMu.Unlock()
	return slices.Clone(c.keys)
}

func (c *controller) has(p *corev1.Pod) bool {
	return slices.Contains(c.running(), p.Namespace+"/"+p.Name)
}

// published makes the worker's sups visible to running.
func (c *controller) published() {
	keys := make([]string, 0, len(c.sups))
	for k := range c.sups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c.keysMu.Lock()
	c.keys = keys
	c.keysMu.Unlock()
}

func meta(obj any) (metav1.Object, error) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return m, nil
}

// podKey is namespace/name for a pod the bed runs istiod for ("" for any other).
func podKey(p *corev1.Pod) string {
	if p.Labels[OptOutLabel] == "off" || istiod(p) == nil {
		return ""
	}
	return p.Namespace + "/" + p.Name
}

func istiod(p *corev1.Pod) *corev1.Container {
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == istiodContainer {
			return &p.Spec.Containers[i]
		}
	}
	return nil
}

func (c *controller) run(ctx context.Context, ready func() error) error {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return fmt.Errorf("the caches did not sync: %w", ctx.Err())
	}
	worker := make(chan struct{})
	go func() {
		defer close(worker)
		for c.next(ctx) {
		}
	}()
	// Tokens expire: re-sync every process now and then.
	go func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				for _, k := range c.running() {
					c.queue.Add(k)
				}
				c.queue.Add(forwardersKey)
			}
		}
	}()
	if err := ready(); err != nil {
		return err
	}
	<-ctx.Done()
	// Once the worker has returned, the processes are this goroutine's to stop.
	c.queue.ShutDown()
	<-worker
	for _, s := range c.sups {
		s.stop()
	}
	c.fwds.closeAll()
	return nil
}

func (c *controller) next(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	var err error
	if key == forwardersKey {
		err = c.syncForwarders()
	} else {
		err = c.syncPod(ctx, key)
		c.published()
	}
	if err != nil && ctx.Err() == nil {
		log.Printf("%s: %v (retrying)", key, err)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// syncPod brings one pod's process in line with the pod, as a kubelet does its container:
// a running pod (kwok started it: it has an IP) has a process, a deleted one has none (and
// is released once it has stopped), and the pod shows the process's state.
func (c *controller) syncPod(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	p, err := c.pods.Pods(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	sup := c.sups[key]
	gone := p == nil || p.DeletionTimestamp != nil || podKey(p) == ""
	if sup != nil && (gone || sup.uid != string(p.UID)) {
		log.Printf("%s: stopping istiod", key)
		sup.stop()
		delete(c.sups, key)
		c.releasePorts(key)
		c.queue.Add(forwardersKey)
		sup = nil
	}
	if p == nil {
		return nil
	}
	if p.DeletionTimestamp != nil {
		// Its process has stopped: the pod may go (a kubelet confirms a pod's deletion once
		// its containers have stopped).
		return c.release(ctx, p)
	}
	if gone {
		return nil // opted out since
	}
	if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
		if sup == nil {
			if sup, err = c.startFor(ctx, key, p); err != nil {
				return err
			}
		} else if err := c.refresh(ctx, sup, p); err != nil {
			return err
		}
	}
	return c.syncStatus(ctx, p, sup)
}

// Finalizer holds a pod whose istiod runs until the process has stopped, so that a pod
// gone means its istiod is gone (kwok deletes pods at once otherwise).
const Finalizer = "istioctl.test/real-istiod"

func (c *controller) hold(ctx context.Context, p *corev1.Pod) error {
	if slices.Contains(p.Finalizers, Finalizer) {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, Finalizer)
	_, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "realistiod"})
	return err
}

func (c *controller) release(ctx context.Context, p *corev1.Pod) error {
	if !slices.Contains(p.Finalizers, Finalizer) {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"$deleteFromPrimitiveList/finalizers":[%q]}}`, Finalizer)
	_, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "realistiod"})
	if err == nil {
		// And confirm the deletion, as a kubelet does once the containers have stopped
		// (kwok's own confirmation may have come while the finalizer held the pod).
		err = c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (c *controller) podDir(p *corev1.Pod) string {
	return filepath.Join(c.state, "pods", p.Namespace+"_"+p.Name)
}

// startFor prepares the pod's files and credentials and starts its process. A volume or env
// source that does not exist yet leaves it waiting, as ContainerCreating.
func (c *controller) startFor(ctx context.Context, key string, p *corev1.Pod) (started *supervisor, err error) {
	dir := c.podDir(p)
	take := freePort
	if c.ports != nil {
		take = func() (int, error) { return c.ports.take(key) }
		defer func() {
			if started == nil {
				c.ports.release(key)
			}
		}()
	}
	s := &supervisor{
		key: p.Namespace + "/" + p.Name, uid: string(p.UID), created: p.CreationTimestamp.Time, binary: c.binary, dir: dir,
		logPath: filepath.Join(dir, istiodContainer+".log"),
		notify:  func() { c.queue.Add(key) },
		grace:   5 * time.Second,
	}
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil && time.Duration(*g)*time.Second < s.grace {
		s.grace = time.Duration(*g) * time.Second
	}
	if err := os.MkdirAll(s.root(), 0o755); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	l, err := deriveLaunch(p, istiod(p), c, s.root(), kubeconfig, take)
	if err == errMountPending {
		log.Printf("%s: %v", s.key, err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.launch = l
	if err := c.hold(ctx, p); err != nil {
		return nil, err
	}
	if err := c.writeCredentials(ctx, s, p); err != nil {
		return nil, err
	}
	if err := writeFiles(s.root(), l); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "ports"), []byte(portsText(l)), 0o644); err != nil {
		return nil, err
	}
	log.Printf("%s: starting istiod for pod %s (%s)", key, s.key, portsText(l))
	s.start(context.Background())
	c.sups[key] = s
	c.queue.Add(forwardersKey)
	return s, nil
}

func portsText(l *launch) string {
	var ports []string
	for cp, addr := range l.Ports {
		ports = append(ports, fmt.Sprintf("%d=%s", cp, addr))
	}
	sort.Strings(ports)
	return strings.Join(ports, " ")
}

// refresh rewrites what changed in the process's volumes and renews its tokens.
func (c *controller) refresh(ctx context.Context, s *supervisor, p *corev1.Pod) error {
	l := &launch{Files: map[string][]byte{}}
	if _, err := mountVolumes(p, istiod(p), c, l); err != nil {
		return nil // a source went away: the files stay as they were, as a kubelet's would
	}
	if err := writeFiles(s.root(), l); err != nil {
		return err
	}
	if time.Since(c.tokens[s.uid]) > 20*time.Minute {
		return c.writeCredentials(ctx, s, p)
	}
	return nil
}

// writeCredentials writes the process's kubeconfig: the apiserver's address and CA with a
// token of the pod's ServiceAccount (never the bed's admin credentials, so the chart's RBAC
// is what istiod gets), and the projected tokens its volumes ask for.
func (c *controller) writeCredentials(ctx context.Context, s *supervisor, p *corev1.Pod) error {
	sa := p.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	token := func(audience string, seconds int64) (string, error) {
		req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To(max(seconds, 3600)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.Name, UID: p.UID},
		}}
		if audience != "" {
			req.Spec.Audiences = []string{audience}
		}
		tr, err := c.client.CoreV1().ServiceAccounts(p.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
		if err != nil {
			return "", fmt.Errorf("requesting a token of ServiceAccount %s/%s: %w", p.Namespace, sa, err)
		}
		return tr.Status.Token, nil
	}
	tok, err := token("", 3600)
	if err != nil {
		return err
	}
	tokenPath := filepath.Join(s.dir, "token")
	if err := writeIfChanged(tokenPath, []byte(tok), 0o600); err != nil {
		return err
	}
	for _, pt := range s.launch.Tokens {
		t, err := token(pt.Audience, pt.Seconds)
		if err != nil {
			return err
		}
		if err := writeIfChanged(filepath.Join(s.root(), pt.Path), []byte(t), 0o600); err != nil {
			return err
		}
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: bed
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    tokenFile: %s
contexts:
- name: bed
  context: {cluster: bed, user: %s}
current-context: bed
`, c.cfg.Host, c.caFile, sa, tokenPath, sa)
	if err := writeIfChanged(filepath.Join(s.dir, "kubeconfig"), []byte(kc), 0o600); err != nil {
		return err
	}
	c.tokens[s.uid] = time.Now()
	return nil
}

// sources for deriveLaunch, from the informers' caches.
func (c *controller) configMap(ns, name string) (map[string][]byte, bool) {
	cm, err := c.configMaps.ConfigMaps(ns).Get(name)
	if err != nil {
		return nil, false
	}
	out := map[string][]byte{}
	for k, v := range cm.Data {
		out[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		out[k] = v
	}
	return out, true
}

func (c *controller) secret(ns, name string) (map[string][]byte, bool) {
	s, err := c.secrets.Secrets(ns).Get(name)
	if err != nil {
		return nil, false
	}
	return s.Data, true
}

// releasePorts returns a stopped process's ports to the pool.
func (c *controller) releasePorts(key string) {
	if c.ports != nil {
		c.ports.release(key)
	}
}

// freePort asks the kernel for a free loopback port (when realistiod has no -ports).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// selects says whether a Service's selector picks the pod.
func selects(svc *corev1.Service, p *corev1.Pod) bool {
	if len(svc.Spec.Selector) == 0 || svc.Namespace != p.Namespace {
		return false
	}
	return labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(p.Labels))
}

// servicePortTarget resolves a Service port's targetPort against the pod's container ports.
func servicePortTarget(sp corev1.ServicePort, p *corev1.Pod) int32 {
	tp := sp.TargetPort
	if tp.IntVal == 0 && tp.StrVal == "" {
		return sp.Port
	}
	if tp.StrVal == "" {
		return tp.IntVal
	}
	for _, ctr := range p.Spec.Containers {
		for _, cp := range ctr.Ports {
			if cp.Name == tp.StrVal {
				return cp.ContainerPort
			}
		}
	}
	if n, err := strconv.Atoi(tp.StrVal); err == nil {
		return int32(n)
	}
	return 0
}

// syncForwarders listens on every (cluster IP, port) of a Service that selects a pod the
// bed runs istiod for, carrying connections to that process's listener.
func (c *controller) syncForwarders() error {
	svcs, err := c.services.List(labels.Everything())
	if err != nil {
		return err
	}
	want := map[string][]backend{}
	for _, svc := range svcs {
		ip := net.ParseIP(svc.Spec.ClusterIP)
		if ip == nil || !ip.IsLoopback() {
			continue // the bed's service range is loopback: anything else is never bound
		}
		for _, s := range c.newestFirst() {
			p, err := c.pods.Pods(strings.SplitN(s.key, "/", 2)[0]).Get(strings.SplitN(s.key, "/", 2)[1])
			if err != nil || !selects(svc, p) {
				continue
			}
			for _, sp := range svc.Spec.Ports {
				if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
					continue
				}
				if addr, ok := s.launch.Ports[servicePortTarget(sp, p)]; ok {
					at := net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(sp.Port)))
					want[at] = append(want[at], backend{sup: s, addr: addr})
				}
			}
		}
	}
	return c.fwds.sync(want)
}

// newestFirst lists the processes, the newest pod's first: during a rollout, connections
// go to the new template's istiod once it is ready.
func (c *controller) newestFirst() []*supervisor {
	out := make([]*supervisor, 0, len(c.sups))
	for _, s := range c.sups {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].created.Equal(out[j].created) {
			return out[i].created.After(out[j].created)
		}
		return out[i].key < out[j].key
	})
	return out
}
