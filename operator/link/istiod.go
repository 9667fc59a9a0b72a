package link

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/transport/spdy"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

// DebugPort is istiod's debug (monitoring) port, which serves /debug/clusterz.
const DebugPort = 15014

// ClusterStatus is one cluster an istiod reads, as its /debug/clusterz lists it
// (upstream's cluster.DebugInfo): the config cluster first with no Secret, then one per
// remote cluster with the Secret it came from and its sync status (synced, syncing,
// timeout or closed).
type ClusterStatus struct {
	ID         string `json:"id"`
	SecretName string `json:"secretName"`
	SyncStatus string `json:"syncStatus"`
}

// ParseClusterz reads a /debug/clusterz response.
func ParseClusterz(body []byte) ([]ClusterStatus, error) {
	var out []ClusterStatus
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("istiod's /debug/clusterz is not the list of clusters it reads: %v", err)
	}
	return out, nil
}

// Istiod is one istiod's view of the clusters it reads, or why it could not be asked.
type Istiod struct {
	Pod, Revision string
	Clusters      []ClusterStatus
	Err           error
}

// IstiodTimeout bounds asking one istiod.
const IstiodTimeout = 5 * time.Second

// Istiods asks every running istiod pod in ns (of revision rev; "" for every one) for its
// /debug/clusterz, as upstream's remote-clusters does: through the apiserver's
// port-forward to the pod's debug port. None when no istiod runs there.
func Istiods(ctx context.Context, c *kube.Client, ns, rev string) ([]Istiod, error) {
	selector := "app=istiod"
	if rev != "" {
		selector += ",istio.io/rev=" + rev
	}
	pods, err := c.ListIn(ctx, kube.PodGVK, ns, selector)
	if err != nil {
		return nil, err
	}
	var out []Istiod
	for i := range pods {
		var p corev1.Pod
		if err := fromUnstructured(&pods[i], &p); err != nil || p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		v := Istiod{Pod: p.Name, Revision: p.Labels["istio.io/rev"]}
		if v.Revision == "" {
			v.Revision = "default"
		}
		body, err := portForwardGet(ctx, c, ns, p.Name, DebugPort, "/debug/clusterz")
		if err == nil {
			v.Clusters, err = ParseClusterz(body)
		}
		v.Err = err
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out, nil
}

// portForwardGet sends one HTTP GET to a pod's port through the apiserver's port-forward
// and returns the body. It speaks the port-forward protocol on client-go's SPDY transport
// itself rather than through tools/portforward: that one needs a local listener and
// reports the pod side's errors ("no forward found for port") only through klog, where
// this returns them.
func portForwardGet(ctx context.Context, c *kube.Client, ns, pod string, port int, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, IstiodTimeout)
	defer cancel()
	what := fmt.Sprintf("port-forward to pod %s/%s:%d", ns, pod, port)
	transport, upgrader, err := spdy.RoundTripperFor(c.Config)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	u, err := url.Parse(c.Config.Host)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	u.Path = strings.TrimRight(u.Path, "/") + fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/portforward", ns, pod)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
	if err != nil {
		return nil, err
	}
	conn, _, err := spdy.Negotiate(upgrader, &http.Client{Transport: transport}, req, "portforward.k8s.io")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, c.ExplainError(err))
	}
	defer conn.Close()
	go func() { <-ctx.Done(); conn.Close() }()

	headers := http.Header{}
	headers.Set(corev1.StreamType, corev1.StreamTypeError)
	headers.Set(corev1.PortHeader, strconv.Itoa(port))
	headers.Set(corev1.PortForwardRequestIDHeader, "0")
	errStream, err := conn.CreateStream(headers)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	errStream.Close() // nothing to send on it
	remoteErr := make(chan string, 1)
	go func() {
		msg, _ := io.ReadAll(errStream)
		remoteErr <- strings.TrimSpace(string(msg))
	}()
	headers.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := conn.CreateStream(headers)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	body, err := get(ctx, data, port, path)
	if err != nil {
		select {
		case msg := <-remoteErr:
			if msg != "" {
				return nil, fmt.Errorf("%s: %s", what, msg)
			}
		case <-time.After(500 * time.Millisecond):
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: no answer within %v", what, IstiodTimeout)
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return body, nil
}

// get writes one HTTP/1.1 GET on the stream and reads the response.
func get(ctx context.Context, s httpstream.Stream, port int, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://localhost:%d%s", port, path), nil)
	if err != nil {
		return nil, err
	}
	req.Close = true
	if err := req.Write(s); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(s), req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return body, nil
}
