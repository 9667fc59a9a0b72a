package harness

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// Said keeps what a test's runs said (results, plans, events, reports, warnings, errors, as a
// printer would get them) and every token the clusters issued, to prove that no credential
// is ever in it. A test's subtests share one; it is safe for concurrent use.
type Said struct {
	mu   sync.Mutex
	outs []string
	// allowed are outputs that may hold a credential: what a command exists to print (a
	// remote Secret made without ApplyTo, as upstream prints it).
	allowed map[int]bool
	tokens  map[string]bool
}

// Record keeps each value as a printer would get it: a string as it is, an error's text,
// anything else as JSON. allowed says they may hold a credential.
func (s *Said) Record(t testing.TB, allowed bool, vs ...any) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vs {
		var out string
		switch v := v.(type) {
		case nil:
			continue
		case string:
			out = v
		case error:
			out = v.Error()
		default:
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("recording %T: %v", v, err)
			}
			out = string(b)
		}
		if allowed {
			if s.allowed == nil {
				s.allowed = map[int]bool{}
			}
			s.allowed[len(s.outs)] = true
		}
		s.outs = append(s.outs, out)
	}
}

// CollectTokens remembers every ServiceAccount token the bed's istio namespaces hold now:
// tokens a run may have seen and then removed are collected before they go.
func (s *Said) CollectTokens(t testing.TB, bed *cluster.Bed) {
	t.Helper()
	for _, c := range bed.Clusters {
		toks := ServiceAccountTokens(t, c)
		s.mu.Lock()
		if s.tokens == nil {
			s.tokens = map[string]bool{}
		}
		for _, tok := range toks {
			s.tokens[tok] = true
		}
		s.mu.Unlock()
	}
}

// NoCredential fails t when a token the bed's clusters issued (as issued, or base64 as a
// []byte is in JSON) or a client key of the bed's kubeconfig is in anything recorded but
// what may hold one, or in an install record of a member. It collects the tokens first and
// fails when it saw fewer than minTokens tokens or minRecords install records: nothing to
// look for would prove nothing.
func (s *Said) NoCredential(t testing.TB, bed *cluster.Bed, minTokens, minRecords int) {
	t.Helper()
	s.CollectTokens(t, bed)
	s.mu.Lock()
	defer s.mu.Unlock()
	outs := append([]string{}, s.outs...)
	records := 0
	for _, c := range bed.Clusters {
		list, err := c.Kube.CoreV1().Secrets("istio-system").List(context.Background(), metav1.ListOptions{LabelSelector: "install.istio.io/record"})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.Items {
			records++
			for _, v := range r.Data {
				outs = append(outs, string(v))
			}
		}
	}
	if len(s.tokens) < minTokens || records < minRecords {
		t.Fatalf("only %d tokens and %d install records seen, want at least %d and %d: nothing to look for", len(s.tokens), records, minTokens, minRecords)
	}
	creds := map[string]bool{}
	for tok := range s.tokens {
		creds[tok], creds[base64.StdEncoding.EncodeToString([]byte(tok))] = true, true
	}
	// The bed's own credentials: each admin's client key, as the kubeconfig holds it and a
	// line of its PEM.
	raw, err := clientcmd.LoadFromFile(bed.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	keys := 0
	for _, u := range raw.AuthInfos {
		if len(u.ClientKeyData) > 0 {
			keys++
			creds[base64.StdEncoding.EncodeToString(u.ClientKeyData)] = true
			lines := strings.Split(strings.TrimSpace(string(u.ClientKeyData)), "\n")
			creds[lines[len(lines)/2]] = true
		}
	}
	if keys == 0 {
		t.Fatalf("the bed's kubeconfig holds no client keys")
	}
	for i, o := range outs {
		for c := range creds {
			if strings.Contains(o, c) && !s.allowed[i] {
				t.Errorf("output %d holds a credential:\n%s", i, o)
			}
		}
	}
}
