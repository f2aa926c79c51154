"""The REST test routes (tests/outside_the_admin/test_rest.py): viewsets of the test
app's workflow models."""

from django.db.models import Q
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView
from rest_framework import permissions, routers, serializers, viewsets

from django_workflow.rest import WorkflowModelPermissions, WorkflowViewSetMixin
from example_project.approvals.models import Document
from tests.testapp.models import Decision, Expense, Inquiry, Proposal, Routed, Tender, Ticket


class DecisionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Decision
        fields = ["id", "note", "state"]
        read_only_fields = ["state"]


class DecisionViewSet(WorkflowViewSetMixin, viewsets.ModelViewSet):
    queryset = Decision.objects.all()
    serializer_class = DecisionSerializer
    permission_classes = [permissions.IsAuthenticated]


class GuardedDecisionViewSet(DecisionViewSet):
    """Model permissions: a transition needs change_decision."""

    permission_classes = [WorkflowModelPermissions]


class OwnerMayWrite(permissions.BasePermission):
    """Anyone may read a ticket they can see; only its owner may change it."""

    def has_object_permission(self, request, view, obj):
        return request.method in permissions.SAFE_METHODS or obj.owner_id == request.user.pk


class TicketSerializer(serializers.ModelSerializer):
    class Meta:
        model = Ticket
        fields = ["id", "owner", "state"]
        read_only_fields = ["state"]


class TicketViewSet(WorkflowViewSetMixin, viewsets.ModelViewSet):
    """Tickets of the requester and unowned ones; another's ticket is not found."""

    queryset = Ticket.objects.all()
    serializer_class = TicketSerializer
    permission_classes = [permissions.IsAuthenticated, OwnerMayWrite]

    def get_queryset(self):
        return Ticket.objects.filter(Q(owner=self.request.user) | Q(owner=None))


class RoutedSerializer(serializers.ModelSerializer):
    class Meta:
        model = Routed
        fields = ["id", "amount", "decision", "state"]
        read_only_fields = ["state"]


class RoutedViewSet(WorkflowViewSetMixin, viewsets.ModelViewSet):
    queryset = Routed.objects.all()
    serializer_class = RoutedSerializer
    permission_classes = [permissions.IsAuthenticated]


class ProposalSerializer(serializers.ModelSerializer):
    class Meta:
        model = Proposal
        fields = ["id", "submitted_at", "respond_by", "state"]
        read_only_fields = ["state"]


class ProposalViewSet(WorkflowViewSetMixin, viewsets.ReadOnlyModelViewSet):
    queryset = Proposal.objects.all()
    serializer_class = ProposalSerializer
    permission_classes = [permissions.IsAuthenticated]


class ExpenseSerializer(serializers.ModelSerializer):
    class Meta:
        model = Expense
        fields = ["id", "amount", "receipt", "state"]
        read_only_fields = ["state"]


class ExpenseViewSet(WorkflowViewSetMixin, viewsets.ModelViewSet):
    queryset = Expense.objects.all()
    serializer_class = ExpenseSerializer
    permission_classes = [permissions.IsAuthenticated]


class DocumentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["id", "title", "state"]
        read_only_fields = ["state"]


class DocumentViewSet(WorkflowViewSetMixin, viewsets.ModelViewSet):
    """The approvals example's documents: ``approve`` counts votes (docs/votes.md)."""

    queryset = Document.objects.all()
    serializer_class = DocumentSerializer
    permission_classes = [permissions.IsAuthenticated]


class InquirySerializer(serializers.ModelSerializer):
    class Meta:
        model = Inquiry
        fields = ["id", "state"]
        read_only_fields = ["state"]


class InquiryViewSet(WorkflowViewSetMixin, viewsets.ReadOnlyModelViewSet):
    """Inquiries with their service levels (docs/slas.md)."""

    queryset = Inquiry.objects.all()
    serializer_class = InquirySerializer
    permission_classes = [permissions.IsAuthenticated]


class TenderSerializer(serializers.ModelSerializer):
    class Meta:
        model = Tender
        fields = ["id", "state", "workflow_version"]
        read_only_fields = ["state", "workflow_version"]


class TenderViewSet(WorkflowViewSetMixin, viewsets.ModelViewSet):
    """Tenders of two versions (docs/versions.md)."""

    queryset = Tender.objects.all()
    serializer_class = TenderSerializer
    permission_classes = [permissions.IsAuthenticated]


router = routers.DefaultRouter()
router.register("decisions", DecisionViewSet)
router.register("guarded-decisions", GuardedDecisionViewSet, basename="guarded-decision")
router.register("tickets", TicketViewSet)
router.register("routed", RoutedViewSet)
router.register("proposals", ProposalViewSet)
router.register("expenses", ExpenseViewSet)
router.register("documents", DocumentViewSet)
router.register("inquiries", InquiryViewSet)
router.register("tenders", TenderViewSet)

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("", include(router.urls)),
]
