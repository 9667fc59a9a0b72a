package install

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/admission"
	"github.com/istioctl-installer/istioctl/operator/readiness"
)

// confirmRefusal re-asks admission, by a dry-run create of a pod from the workload's
// template, before a wait gives up on a workload whose pods were refused for good: the
// condition or event it read may predate the removal of the cause (a ReplicaSet keeps its
// FailedCreate condition until its next try, which its controller's back-off may put
// minutes away). Still refused: failed, with the refusal as it reads now. Admitted: in
// progress, until the controller tries again. A dry run that cannot tell keeps the
// verdict read.
func (in *pass) confirmRefusal(ctx context.Context, live *unstructured.Unstructured, r readiness.Result) (readiness.Result, error) {
	pod := admission.PodFor(live)
	if pod == nil {
		return r, nil
	}
	now, err := admission.DryRunPod(ctx, in.Client, pod)
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return r, err
		}
		return r, nil
	case now == nil:
		return readiness.Result{Status: readiness.InProgress,
			Message: "its pods were refused earlier (" + r.Refusal.Message + "); admission admits them now: waiting for its controller to try again"}, nil
	case now.Permanent:
		return readiness.Result{Status: readiness.Failed, Message: "pods refused by " + string(now.Layer) + ": " + now.Message, Refusal: now}, nil
	}
	return readiness.Result{Status: readiness.InProgress, Message: string(now.Layer) + ": " + now.Message}, nil
}
