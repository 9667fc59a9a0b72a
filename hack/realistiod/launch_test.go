package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

type fakeSources struct{ cms, secrets map[string]map[string][]byte }

func (f fakeSources) configMap(ns, name string) (map[string][]byte, bool) {
	d, ok := f.cms[ns+"/"+name]
	return d, ok
}

func (f fakeSources) secret(ns, name string) (map[string][]byte, bool) {
	d, ok := f.secrets[ns+"/"+name]
	return d, ok
}

// istiodPod is the pod of the default profile's istiod Deployment, as our chart renders it.
func istiodPod(t *testing.T) *corev1.Pod {
	t.Helper()
	b, err := os.ReadFile("testdata/istiod-pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := &corev1.Pod{}
	if err := yaml.Unmarshal(b, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func ports() func() (int, error) {
	next := 40000
	return func() (int, error) { next++; return next, nil }
}

func envOf(l *launch) map[string]string {
	out := map[string]string{}
	for _, kv := range l.Env {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

func TestDeriveLaunch(t *testing.T) {
	p := istiodPod(t)
	src := fakeSources{
		secrets: map[string]map[string][]byte{"istio-system/cacerts": {"root-cert.pem": []byte("ROOT"), "ca-key.pem": []byte("KEY")}},
	}
	l, err := deriveLaunch(p, istiod(p), src, "/bed/pod/root", "/bed/pod/kubeconfig", ports())
	if err != nil {
		t.Fatal(err)
	}
	env := envOf(l)
	for k, want := range map[string]string{
		"POD_NAME":        p.Name,
		"POD_NAMESPACE":   "istio-system",
		"SERVICE_ACCOUNT": "istiod",
		"REVISION":        "default",
		// The pod's own KUBECONFIG (a remote's, when its Secret is mounted) under the root
		// first, then the ServiceAccount's credentials.
		"KUBECONFIG": "/bed/pod/root/var/run/secrets/remote/config:/bed/pod/kubeconfig",
		// limits.cpu is not set: the node's allocatable, capped at this host's CPUs.
		"GOMAXPROCS": strconv.Itoa(runtime.NumCPU()),
		"HOME":       "/bed/pod/root",
	} {
		if env[k] != want {
			t.Errorf("env %s = %q, want %q", k, env[k], want)
		}
	}
	args := strings.Join(l.Args, " ")
	if !strings.HasPrefix(args, "discovery --monitoringAddr=:15014") {
		t.Errorf("args start %q", args)
	}
	// Every listener on its own loopback port, the later flag winning over the chart's.
	for port, flag := range map[int32]string{8080: "httpAddr", 15017: "httpsAddr", 15010: "grpcAddr", 15012: "secureGRPCAddr", 15014: "monitoringAddr"} {
		addr, ok := l.Ports[port]
		if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Errorf("port %d listens at %q", port, addr)
		}
		if !strings.Contains(args, "--"+flag+"="+addr) {
			t.Errorf("args lack --%s=%s: %s", flag, addr, args)
		}
	}
	if !strings.Contains(args, "--ctrlz_port=") {
		t.Errorf("ControlZ keeps its shared default port: %s", args)
	}
	if string(l.Files["etc/cacerts/root-cert.pem"]) != "ROOT" || string(l.Files["etc/cacerts/ca-key.pem"]) != "KEY" {
		t.Errorf("cacerts not mounted: %v", keys(l.Files))
	}
	if len(l.Tokens) != 1 || l.Tokens[0].Path != "var/run/secrets/tokens/istio-token" || l.Tokens[0].Audience != "istio-ca" {
		t.Errorf("projected token: %+v", l.Tokens)
	}
	if l.ProbePath != "/ready" || l.ProbePort != 8080 {
		t.Errorf("probe %s on %d", l.ProbePath, l.ProbePort)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestDeriveLaunchWaitsForRequiredSources(t *testing.T) {
	p := istiodPod(t)
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "must", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent"}}})
	c := istiod(p)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "must", MountPath: "/must"})
	if _, err := deriveLaunch(p, c, fakeSources{}, "/r", "/k", ports()); err != errMountPending {
		t.Fatalf("a required Secret missing: %v, want errMountPending", err)
	}
}

func TestFlagPort(t *testing.T) {
	for _, tc := range []struct {
		args []string
		port int32
		on   bool
	}{
		{nil, 15010, true},
		{[]string{"discovery", "--grpcAddr=:16010"}, 16010, true},
		{[]string{"discovery", "--grpcAddr", "0.0.0.0:17010"}, 17010, true},
		{[]string{"discovery", "-grpcAddr=:1", "--grpcAddr=:2"}, 2, true},
		{[]string{"discovery", "--grpcAddr="}, 0, false},
		{[]string{"discovery", "--grpcAddrX=:9"}, 15010, true},
	} {
		port, on := flagPort(tc.args, "grpcAddr", 15010)
		if port != tc.port || on != tc.on {
			t.Errorf("%q: %d %v, want %d %v", tc.args, port, on, tc.port, tc.on)
		}
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "x", "B": "y"}
	for in, want := range map[string]string{
		"plain":     "plain",
		"$(A)-$(B)": "x-y",
		"$(C)":      "$(C)",
		"$$(A)":     "$(A)",
		"$(A":       "$(A",
		"a$":        "a$",
	} {
		if got := expand(in, vars); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
