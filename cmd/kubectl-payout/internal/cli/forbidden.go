package cli

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// OperatorRole is the ClusterRole config/ installs for the people who run `kubectl payout`
// (generated from the +kubebuilder:rbac markers of this plugin's commands).
const OperatorRole = "payout-operator-role"

// ForbiddenError is the API server refusing a request of the plugin for lack of rights, as a
// sentence that names who asked, the verb and the resource, and how to get the right.
type ForbiddenError struct {
	// User is the identity the API server authenticated; empty when it could not be learned.
	User string
	// Verb is the RBAC verb: get, list, create, update, patch, delete.
	Verb string
	// Resource is the plural resource, with its subresource ("transfers/status"), and Group its
	// API group ("" for the core group).
	Resource, Group string
	// Namespace is the request's namespace; empty for a cluster-scoped resource or a list
	// across all namespaces (AllNamespaces).
	Namespace     string
	AllNamespaces bool
	// Err is the API server's error.
	Err error
}

func (e *ForbiddenError) Error() string {
	who := "you"
	if e.User != "" {
		who = fmt.Sprintf("user %q", e.User)
	}
	resource := e.Resource
	if e.Group != "" {
		resource += "." + e.Group
	}
	where := ""
	switch {
	case e.Namespace != "":
		where = " in namespace " + e.Namespace
	case e.AllNamespaces:
		where = " in all namespaces"
	}
	return fmt.Sprintf("%s may not %s %s%s: the cluster's RBAC forbids it; a cluster administrator can grant it by binding the ClusterRole %s to %s",
		who, e.Verb, resource, where, OperatorRole, who)
}

func (e *ForbiddenError) Unwrap() error { return e.Err }

// forbiddenClient wraps c so that a Forbidden answer becomes a *ForbiddenError naming the
// verb of the call, the resource, the namespace and the user.
func forbiddenClient(c client.WithWatch) client.WithWatch {
	w := &whoami{c: c}
	translate := func(ctx context.Context, err error, verb string, obj client.Object, namespace string, namespaced bool) error {
		if !apierrors.IsForbidden(err) {
			return err
		}
		fe := &ForbiddenError{Verb: verb, Namespace: namespace, Err: err}
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			if d := status.Status().Details; d != nil {
				// a Forbidden's details name the resource (as Kind) and its group
				fe.Resource, fe.Group = d.Kind, d.Group
			}
		}
		if fe.Resource == "" {
			if gvk, gerr := c.GroupVersionKindFor(obj); gerr == nil {
				if m, merr := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); merr == nil {
					fe.Resource, fe.Group = m.Resource.Resource, m.Resource.Group
				}
			}
		}
		if namespace == "" && namespaced {
			fe.AllNamespaces = true
		}
		fe.User = w.name(ctx, err)
		return fe
	}
	namespaced := func(obj client.Object) bool {
		ok, err := c.IsObjectNamespaced(obj)
		return err == nil && ok
	}
	sub := func(name string) string { return "/" + name }
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			return translate(ctx, c.Get(ctx, key, obj, opts...), "get", obj, key.Namespace, namespaced(obj))
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lo := (&client.ListOptions{}).ApplyOptions(opts)
			err := c.List(ctx, list, opts...)
			if !apierrors.IsForbidden(err) {
				return err
			}
			item, ierr := itemOf(c, list)
			if ierr != nil {
				return err
			}
			return translate(ctx, err, "list", item, lo.Namespace, namespaced(item))
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return translate(ctx, c.Create(ctx, obj, opts...), "create", obj, obj.GetNamespace(), namespaced(obj))
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return translate(ctx, c.Update(ctx, obj, opts...), "update", obj, obj.GetNamespace(), namespaced(obj))
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return translate(ctx, c.Patch(ctx, obj, patch, opts...), "patch", obj, obj.GetNamespace(), namespaced(obj))
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return translate(ctx, c.Delete(ctx, obj, opts...), "delete", obj, obj.GetNamespace(), namespaced(obj))
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, name string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			err := translate(ctx, c.SubResource(name).Update(ctx, obj, opts...), "update", obj, obj.GetNamespace(), namespaced(obj))
			if fe := (*ForbiddenError)(nil); errors.As(err, &fe) && !strings.Contains(fe.Resource, "/") {
				fe.Resource += sub(name)
			}
			return err
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, name string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			err := translate(ctx, c.SubResource(name).Patch(ctx, obj, patch, opts...), "patch", obj, obj.GetNamespace(), namespaced(obj))
			if fe := (*ForbiddenError)(nil); errors.As(err, &fe) && !strings.Contains(fe.Resource, "/") {
				fe.Resource += sub(name)
			}
			return err
		},
	})
}

// itemOf is an empty object of the kind list holds.
func itemOf(c client.Client, list client.ObjectList) (client.Object, error) {
	gvk, err := c.GroupVersionKindFor(list)
	if err != nil {
		return nil, err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	obj, err := c.Scheme().New(gvk)
	if err != nil {
		return nil, err
	}
	o, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", gvk)
	}
	return o, nil
}

// Username is the user name the API server authenticates c's requests as, from a
// SelfSubjectReview (every authenticated user may create one): the identity an admission policy
// sees as request.userInfo.username.
func Username(ctx context.Context, c client.Client) (string, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return "", err
	}
	if review.Status.UserInfo.Username == "" {
		return "", errors.New("the API server's SelfSubjectReview named no user")
	}
	return review.Status.UserInfo.Username, nil
}

// whoami learns, once, the user name the API server authenticated: a SelfSubjectReview (every
// authenticated user may create one), else the name in the refusal's own message.
type whoami struct {
	c    client.Client
	once sync.Once
	user string
}

var forbiddenUser = regexp.MustCompile(`User "([^"]*)" cannot`)

func (w *whoami) name(ctx context.Context, refusal error) string {
	w.once.Do(func() { w.user, _ = Username(ctx, w.c) })
	if w.user != "" {
		return w.user
	}
	if m := forbiddenUser.FindStringSubmatch(refusal.Error()); m != nil {
		return m[1]
	}
	return ""
}
