package testcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// api is the few calls `cnperf cluster` makes to its API server, as the
// admin, through the relay on 127.0.0.1: client-go's REST layer on plain
// paths, so that it reaches any API group, and before the server answers,
// without client-go's clientset.
type api struct{ *rest.RESTClient }

func newAPI(dir string, port int) (*api, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil { // Nodes, and the Status an error answers
		return nil, err
	}
	pki := filepath.Join(dir, "pki")
	rc, err := rest.UnversionedRESTClientFor(&rest.Config{Host: fmt.Sprintf("https://127.0.0.1:%d", port), Timeout: 10 * time.Second,
		TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(pki, "ca.crt"), CertFile: filepath.Join(pki, "admin.crt"), KeyFile: filepath.Join(pki, "admin.key")},
		ContentConfig:   rest.ContentConfig{NegotiatedSerializer: serializer.NewCodecFactory(scheme).WithoutConversion()}})
	return &api{rc}, err
}

// create posts an object (JSON), leaving one that exists as it is.
func (a *api) create(ctx context.Context, path string, obj any) error {
	j, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	if err := a.Post().AbsPath(path).Body(j).Do(ctx).Error(); !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func (a *api) nodes(ctx context.Context) ([]corev1.Node, error) {
	var list corev1.NodeList
	err := a.Get().AbsPath("/api/v1/nodes").Do(ctx).Into(&list)
	return list.Items, err
}

// nodeReady is whether node n is Ready, and why not (or not yet
// schedulable) in the kubelet's or the taint's words.
func nodeReady(n corev1.Node) (bool, string) {
	for _, c := range n.Status.Conditions {
		switch {
		case c.Type != corev1.NodeReady:
		case c.Status != corev1.ConditionTrue:
			return false, c.Reason + ": " + c.Message
		case len(n.Spec.Taints) > 0:
			return true, "tainted " + n.Spec.Taints[0].Key
		default:
			return true, ""
		}
	}
	return false, "no Ready condition yet"
}
