package action_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// TestHistoryHoldsNoSecretData installs charts that render a Secret and checks the install
// record lists the Secret by identity and holds none of its data.
func TestHistoryHoldsNoSecretData(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "charts"), os.DirFS("../../manifests/charts")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "profiles"), os.DirFS("../../profiles")); err != nil {
		t.Fatal(err)
	}
	const plain, stringData = "TOP-SECRET-KEY-MATERIAL", "plain-string-data-token"
	encoded := base64.StdEncoding.EncodeToString([]byte(plain))
	secret := `apiVersion: v1
kind: Secret
metadata: {name: test-credentials, namespace: {{ .Release.Namespace }}}
type: Opaque
data: {key.pem: ` + encoded + `}
stringData: {token: ` + stringData + `}
`
	if err := os.WriteFile(filepath.Join(dir, "charts/base/templates/zz-test-secret.yaml"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	// Base alone, in the test's namespace: no control plane is needed to render the Secret.
	in := &action.Install{Config: config(c), ReadinessTimeout: 2 * time.Minute, HistoryMax: action.DefaultHistoryMax, Spec: spec.Options{
		ManifestsDir: dir, Sets: []string{"profile=minimal", "components.pilot.enabled=false", "components.cni.enabled=false",
			"namespace=" + ns, "values.global.istioNamespace=" + ns}}}
	if _, err := in.Run(ctx, nil); err != nil {
		t.Fatalf("install: %v", err)
	}
	if _, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, "test-credentials", metav1.GetOptions{}); err != nil {
		t.Fatalf("the chart's Secret was not installed: %v", err)
	}
	rs, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, history.SecretName("default", 1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(rs.Data[history.DataKey]))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{plain, encoded, stringData, "key.pem"} {
		if strings.Contains(string(payload), leak) {
			t.Errorf("the install record holds %q", leak)
		}
	}
	if !strings.Contains(string(payload), `{"version":"v1","kind":"Secret","namespace":"`+ns+`","name":"test-credentials"}`) {
		t.Errorf("the record does not list the Secret's identity:\n%s", payload)
	}
}
