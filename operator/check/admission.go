package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/admission"
	"github.com/istioctl-installer/istioctl/operator/readiness"
)

// SectionAdmission holds what admission says of the install.
const SectionAdmission = "Admission"

// admissionCheck is precheck's proof that the cluster admits what the install creates: a
// server-side dry run of every rendered object and of a pod of each workload
// (operator/admission). It replaces a look at the namespaces' Pod Security labels, which
// missed quotas, LimitRanges, policies, webhooks, and Pod Security for anything but the
// node agents.
var admissionCheck = Check{ID: "admission", Title: "The cluster admits what the install creates", Section: SectionAdmission, Severity: Error,
	Hint: "see docs/verify.md#admission", Run: admissionSurvey}

// layerHints say what to do about a refusal, by the layer that refused.
var layerHints = map[readiness.Layer]string{
	readiness.PodSecurity: "let the namespace admit these pods (pod-security.kubernetes.io/enforce: privileged for CNI and ztunnel, baseline or privileged for the rest), or install into one that does",
	readiness.Quota:       "raise or remove the namespace's ResourceQuota, or lower the components' resources in the spec",
	readiness.LimitRange:  "change the namespace's LimitRange, or set the components' resources within its bounds in the spec",
	readiness.Validation:  "the pod is invalid once defaults are applied (a LimitRange's default limit below the request?): set resources in the spec",
	readiness.Policy:      "change the policy or its binding to admit the install (its message says what it wants), or set the field it denies in the spec",
	readiness.Webhook:     "ask the webhook's owner to admit the install, or change what it denies in the spec",
}

func admissionSurvey(ctx context.Context, env *Env) []Result {
	objs := env.Expected()
	outcomes, err := admission.Survey(ctx, env.Client, objs)
	if err != nil {
		return []Result{{Object: "(Cluster)", Message: "cannot ask admission: " + err.Error()}}
	}
	var out []Result
	admitted := 0
	for _, o := range outcomes {
		msg := ""
		if o.Note != "" {
			msg = " (" + o.Note + ")"
		}
		r := o.Refusal
		switch {
		case r == nil && o.Note != "" && !strings.HasPrefix(o.Object, "Pod of "):
			out = append(out, Result{Object: o.Object, Passed: true, Severity: Info, Message: "admitted" + msg})
		case r == nil:
			admitted++
		case r.CannotCheck:
			out = append(out, Result{Object: o.Object, Severity: Warning, Message: fmt.Sprintf("cannot check: %s%s", r.Message, msg),
				Hint: "the apiserver cannot answer a dry run here; install stops at the first refusal it meets"})
		case r.Permanent:
			out = append(out, Result{Object: o.Object, Message: fmt.Sprintf("refused by %s: %s%s", r.Layer, r.Message, msg), Hint: layerHints[r.Layer]})
		default:
			// Refused for a reason that may pass (a quota not counted yet): worth saying.
			out = append(out, Result{Object: o.Object, Severity: Warning, Message: fmt.Sprintf("refused for now by %s: %s%s", r.Layer, r.Message, msg)})
		}
	}
	if admitted > 0 || len(out) == 0 {
		out = append(out, Result{Object: "(Cluster)", Passed: true,
			Message: fmt.Sprintf("admits %d of the objects and pods the install creates (server-side dry run; nothing written)", admitted)})
	}
	return out
}
