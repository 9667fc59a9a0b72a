package check

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"istio.io/api/annotation"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

func TestMain(m *testing.M) { cluster.Main(m) }

// TestPrecheckAlphaAnnotationsPaged: the alpha-annotations check reads every page of a
// kind's metadata, so what it reports does not depend on where the pages break.
func TestPrecheckAlphaAnnotationsPaged(t *testing.T) {
	var alpha string
	for _, a := range annotation.AllResourceAnnotations() {
		if a.FeatureStatus == annotation.Alpha && !a.Hidden && !a.Deprecated {
			alpha = a.Name
			break
		}
	}
	if alpha == "" {
		t.Skip("istio.io/api has no alpha annotation")
	}
	c := cluster.Get(t)
	ns := c.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := map[string]bool{}
	for i := 0; i < 7; i++ {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i), Namespace: ns},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		}
		if i%3 == 0 {
			svc.Annotations = map[string]string{alpha: "true"}
			want[ref.New("Service", ns, svc.Name).String()] = true
		}
		if _, err := c.Kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	client, err := kube.NewClientForConfig(c.Config, ownership.KubeOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer func(p int64) { kube.ListPage = p }(kube.ListPage)
	for _, page := range []int64{2, 500} {
		kube.ListPage = page
		got := map[string]bool{}
		for _, r := range alphaAnnotations(ctx, &Env{Client: client}) {
			if r.Object == "(Cluster)" {
				t.Fatalf("page %d: %s", page, r.Message)
			}
			if r.Passed || r.Message != "uses alpha annotation(s) "+alpha {
				t.Errorf("page %d: %+v", page, r)
			}
			got[r.Object] = true
		}
		for o := range want {
			if !got[o] {
				t.Errorf("page %d: %s not reported; got %v", page, o, got)
			}
		}
		for o := range got {
			if !want[o] && strings.HasPrefix(o, "Service/"+ns+"/") {
				t.Errorf("page %d: %s reported, but it has no alpha annotation", page, o)
			}
		}
	}
}
