package controllers

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stablepay/payout-operator/test/testenv"
)

// The controller tests call Reconcile directly against a real API server and assert the stored
// state, as kubebuilder's generated tests do; no manager runs.
func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "controllers suite")
}

var (
	env       *testenv.Env
	ctx       = context.Background()
	fakeClock *clocktesting.FakeClock
)

var _ = BeforeSuite(func() {
	var err error
	env, err = testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	fakeClock = clocktesting.NewFakeClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

var nsSeq int

func namespace() string {
	nsSeq++
	name := fmt.Sprintf("ctrl-test-%d", nsSeq)
	Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

func request(obj client.Object) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKeyFromObject(obj)}
}

// readyOf reads obj back and returns its Ready condition's status and reason.
func readyOf(obj interface {
	client.Object
	GetConditions() []metav1.Condition
}) (metav1.ConditionStatus, string) {
	GinkgoHelper()
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	for _, c := range obj.GetConditions() {
		if c.Type == "Ready" {
			Expect(c.ObservedGeneration).To(Equal(obj.GetGeneration()))
			return c.Status, c.Reason
		}
	}
	return "", ""
}
