package manifests_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/manifests"
	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

func TestMain(m *testing.M) { cluster.Main(m) }

// readDocs splits a YAML stream into objects.
func readDocs(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decoding YAML: %v", err)
		}
		if m == nil {
			continue
		}
		// Round-trip through JSON so numbers have the types the client expects.
		b, err := sigsyaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal(b, &u.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
}

// TestBaseCRDsE2E installs Base alone (no istiod, so no webhook and no admission policy
// validates anything), then: kubectl explain prints the API's descriptions; valid resources
// of every kind are accepted; invalid ones are rejected by the apiserver's schema with the
// offending field's path; and each rule of the table in crdrules_test.go rejects its
// invalid object with the rule's message while its valid counterpart is accepted.
func TestBaseCRDsE2E(t *testing.T) {
	c := cluster.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Setenv("HOME", t.TempDir())
	istioctl := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		root := cmd.NewRootCommand(cmd.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		root.SetArgs(append([]string{"--kubeconfig", c.Kubeconfig}, args...))
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("istioctl %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
		}
		return out.String()
	}
	istioctl("uninstall", "--purge", "-y")
	// The CRDs go again at the end, with every resource of theirs.
	t.Cleanup(func() { istioctl("uninstall", "--purge", "-y") })
	istioctl("install", "--set", "profile=empty", "--set", "components.base.enabled=true", "-y")
	noValidator(ctx, t, c)

	data, err := manifests.Charts.ReadFile("charts/base/crds/crd-all.gen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crds := readDocs(t, data)
	if len(crds) != 15 {
		t.Fatalf("%d CRDs, want 15", len(crds))
	}
	plural := map[schema.GroupKind]string{}
	for _, crd := range crds {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		p, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		plural[schema.GroupKind{Group: group, Kind: kind}] = p
	}

	t.Run("explain", func(t *testing.T) { explain(ctx, t, c) })

	ns := c.Namespace(t)
	create := func(u *unstructured.Unstructured) error {
		gvk := u.GroupVersionKind()
		p, ok := plural[gvk.GroupKind()]
		if !ok {
			return fmt.Errorf("no CRD for %s", gvk)
		}
		gvr := gvk.GroupVersion().WithResource(p)
		// The API takes a moment after Established to serve every version.
		var err error
		for i := 0; i < 50; i++ {
			_, err = c.Dynamic.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{FieldValidation: "Strict"})
			if !apierrors.IsNotFound(err) {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return err
	}

	t.Run("valid", func(t *testing.T) {
		files, _ := filepath.Glob("../testdata/crds/valid/*.yaml")
		seen := map[string]bool{}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range readDocs(t, data) {
				if err := create(u); err != nil {
					t.Errorf("%s: %s %s rejected: %v", f, u.GetKind(), u.GetName(), err)
				}
				seen[u.GetKind()] = true
			}
		}
		for gk := range plural {
			if !seen[gk.Kind] {
				t.Errorf("no valid %s in testdata/crds/valid", gk.Kind)
			}
		}
	})

	t.Run("invalid", func(t *testing.T) {
		files, _ := filepath.Glob("../testdata/crds/invalid/*.yaml")
		if len(files) < 15 {
			t.Errorf("only %d invalid resources", len(files))
		}
		for _, f := range files {
			t.Run(filepath.Base(f), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				first, _, _ := strings.Cut(string(data), "\n")
				want, ok := strings.CutPrefix(first, "# want: ")
				if !ok {
					t.Fatalf("%s: first line must be '# want: <field path>'", f)
				}
				docs := readDocs(t, data)
				if len(docs) != 1 {
					t.Fatalf("%s: want one object, got %d", f, len(docs))
				}
				err = create(docs[0])
				if err == nil {
					t.Fatalf("accepted, want a rejection naming %s", want)
				}
				if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
					t.Errorf("want Invalid or BadRequest, got %v", err)
				}
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not name %s: %v", want, err)
				}
			})
		}
	})

	t.Run("rules", func(t *testing.T) {
		kinds, rules, classes := map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, rc := range ruleCases {
			kinds[rc.kind], rules[rc.want], classes[rc.rule] = true, true, true
		}
		// The table's reach: at least 20 rules over 6 kinds, every class of rule.
		if len(ruleCases) < 20 || len(kinds) < 6 || len(rules) < 10 || len(classes) < 6 {
			t.Errorf("the table has %d cases over %d kinds, %d distinct rules, %d classes", len(ruleCases), len(kinds), len(rules), len(classes))
		}
		for _, rc := range ruleCases {
			t.Run(rc.name, func(t *testing.T) {
				err := create(ruleObject(t, rc, "bad-"+rc.name, rc.invalid))
				switch {
				case err == nil:
					t.Fatalf("accepted, want the %s rule to reject it: %s", rc.rule, rc.want)
				case !apierrors.IsInvalid(err):
					t.Errorf("want Invalid from the schema, got %v", err)
				case strings.Contains(err.Error(), "admission webhook") || strings.Contains(err.Error(), "ValidatingAdmissionPolicy"):
					t.Errorf("rejected by admission, not by the schema: %v", err)
				case !strings.Contains(err.Error(), rc.want):
					t.Errorf("the error does not say %q: %v", rc.want, err)
				}
				if err := create(ruleObject(t, rc, "good-"+rc.name, rc.valid)); err != nil {
					t.Errorf("the valid counterpart is rejected: %v", err)
				}
			})
		}
	})
}

// ruleObject is the object of a rule case with the given spec.
func ruleObject(t *testing.T, rc ruleCase, name, spec string) *unstructured.Unstructured {
	t.Helper()
	docs := readDocs(t, []byte(fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: %s}\nspec: %s\n", rc.apiVersion, rc.kind, name, spec)))
	if len(docs) != 1 {
		t.Fatalf("%s: %d objects", rc.name, len(docs))
	}
	return docs[0]
}

// noValidator fails the test when anything but the schema could validate Istio's
// resources: an istiod, a validating webhook or an admission policy.
func noValidator(ctx context.Context, t *testing.T, c *cluster.Cluster) {
	t.Helper()
	deps, err := c.Kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps.Items {
		if strings.HasPrefix(d.Name, "istiod") {
			t.Fatalf("Deployment %s/%s runs: Base must be alone", d.Namespace, d.Name)
		}
	}
	hooks, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks.Items) > 0 {
		t.Fatalf("ValidatingWebhookConfiguration %s exists: only the schema may validate", hooks.Items[0].Name)
	}
	policies, err := c.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(policies.Items) > 0 {
		t.Fatalf("ValidatingAdmissionPolicy %s exists: only the schema may validate", policies.Items[0].Name)
	}
}

// explain runs kubectl explain on a few fields: it prints the API's own descriptions, as
// the apiserver publishes them from the CRDs' schemas.
func explain(ctx context.Context, t *testing.T, c *cluster.Cluster) {
	kubectl := cluster.Bin(t, "kubectl")
	for _, tc := range []struct{ field, want string }{
		{"virtualservices.spec.hosts", "The destination hosts to which traffic is being sent."},
		{"serviceentries.spec", "Configuration affecting service registry. See more details at:"},
		{"destinationrules.spec.trafficPolicy.tls.mode", "Valid Options: DISABLE, SIMPLE, MUTUAL, ISTIO_MUTUAL"},
		{"authorizationpolicies.spec.action", "Optional."},
		{"peerauthentications.spec.mtls.mode", "Defines the mTLS mode used for peer authentication."},
	} {
		var out []byte
		// The apiserver publishes a new CRD's OpenAPI a moment after it is established.
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			out, err = exec.CommandContext(ctx, kubectl, "--kubeconfig", c.Kubeconfig, "explain", tc.field).CombinedOutput()
			return err == nil && strings.Contains(strings.Join(strings.Fields(string(out)), " "), tc.want), nil
		})
		if err != nil {
			t.Errorf("kubectl explain %s does not say %q:\n%s", tc.field, tc.want, out)
		}
	}
}
