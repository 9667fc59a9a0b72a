package check

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/admission"
	"github.com/istioctl-installer/istioctl/operator/readiness"
)

// SectionAdmission holds what admission says of the install.
const SectionAdmission = "Admission"

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
		// Not a refusal: what could not be asked (a list you may not make, a cluster that
		// did not answer) says so, and the permissions check names what is missing.
		return []Result{{Object: "(Cluster)", Severity: Warning, Message: "cannot check admission: " + err.Error()}}
	}
	var out []Result
	admitted, notJudged := 0, 0
	for _, o := range outcomes {
		msg := ""
		if o.Note != "" {
			msg = " (" + o.Note + ")"
		}
		r := o.Refusal
		switch {
		case o.Unasked && o.Note == admission.NotJudged:
			notJudged++
		case o.Unasked:
			out = append(out, Result{Object: o.Object, Passed: true, Severity: Info, Message: o.Note})
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
	if admitted > 0 || notJudged > 0 || len(out) == 0 {
		msg := fmt.Sprintf("admits %d of the objects and pods the install creates (server-side dry run; nothing written)", admitted)
		if notJudged > 0 {
			msg += fmt.Sprintf("; %d CRDs %s", notJudged, admission.NotJudged)
		}
		out = append(out, Result{Object: "(Cluster)", Passed: true, Message: msg})
	}
	return out
}

// missingReferences reports each reference admission.Missing finds; nothing when the
// workloads need nothing from outside the install.
func missingReferences(ctx context.Context, env *Env) []Result {
	missing, cannot, err := admission.Missing(ctx, env.Client, env.Expected())
	if err != nil {
		return []Result{{Object: "(Cluster)", Message: "cannot read the ConfigMaps and Secrets the workloads need: " + err.Error()}}
	}
	var out []Result
	for obj, err := range cannot {
		out = append(out, Result{Object: obj, Severity: Warning, Message: "cannot check whether it exists: " + err.Error(),
			Hint: "a workload the install creates needs it; ask for permission to get it, or make sure it exists"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object < out[j].Object })
	for _, r := range missing {
		out = append(out, Result{Object: r.Workload,
			Message: fmt.Sprintf("needs %s (%s), which neither the cluster nor the install has: its pods would not start", r.Object(), r.Path),
			Hint: fmt.Sprintf("create %s %s in namespace %s before installing, mark the reference optional: true, or remove it from the spec",
				r.Kind, r.Name, r.Namespace)})
	}
	return out
}
