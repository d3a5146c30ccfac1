package kts.kafka;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.authorizer.AclCreateResult;
import org.apache.kafka.server.authorizer.AclDeleteResult;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.Authorizer;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;

/**
 * Allows every request, as a broker without an authorizer does, and dates the segment files ({@link FileDates})
 * before Kafka answers a ListOffsets request: KafkaApis asks its authorizer about the request's topics before it
 * looks a time up, on the same thread. The Authorizer interface came with Kafka 2.4 (KIP-504); the launcher is
 * compiled with this class only against releases that have it, and sets authorizer.class.name only then.
 */
public final class DatingAuthorizer implements Authorizer {
    private static final int LIST_OFFSETS = 2;

    @Override
    public void configure(Map<String, ?> configs) {
    }

    @Override
    public Map<Endpoint, CompletableFuture<Void>> start(AuthorizerServerInfo serverInfo) {
        Map<Endpoint, CompletableFuture<Void>> ready = new HashMap<>();
        for (Endpoint endpoint : serverInfo.endpoints()) {
            ready.put(endpoint, CompletableFuture.completedFuture(null));
        }
        return ready;
    }

    @Override
    public List<AuthorizationResult> authorize(AuthorizableRequestContext context, List<Action> actions) {
        FileDates dates = FileDates.installed;
        if (dates != null && context.requestType() == LIST_OFFSETS) {
            Set<String> topics = new HashSet<>();
            for (Action action : actions) {
                if (action.resourcePattern().resourceType() == ResourceType.TOPIC) {
                    topics.add(action.resourcePattern().name());
                }
            }
            try {
                dates.date(topics);
            } catch (Exception e) {
                System.err.println("kts: dating segment files failed: " + e);
            }
        }
        return new ArrayList<>(Collections.nCopies(actions.size(), AuthorizationResult.ALLOWED));
    }

    /** The default asks acls(); this authorizer keeps none and allows everything. */
    public AuthorizationResult authorizeByResourceType(AuthorizableRequestContext context, AclOperation op,
                                                       ResourceType resourceType) {
        return AuthorizationResult.ALLOWED;
    }

    @Override
    public List<CompletableFuture<AclCreateResult>> createAcls(AuthorizableRequestContext context,
                                                               List<AclBinding> bindings) {
        List<CompletableFuture<AclCreateResult>> refused = new ArrayList<>();
        for (int i = 0; i < bindings.size(); i++) {
            refused.add(CompletableFuture.completedFuture(
                new AclCreateResult(new InvalidRequestException("the conformance suite's broker keeps no ACLs"))));
        }
        return refused;
    }

    @Override
    public List<CompletableFuture<AclDeleteResult>> deleteAcls(AuthorizableRequestContext context,
                                                               List<AclBindingFilter> filters) {
        List<CompletableFuture<AclDeleteResult>> none = new ArrayList<>();
        for (int i = 0; i < filters.size(); i++) {
            none.add(CompletableFuture.completedFuture(new AclDeleteResult(Collections.emptyList())));
        }
        return none;
    }

    @Override
    public Iterable<AclBinding> acls(AclBindingFilter filter) {
        return Collections.emptyList();
    }

    @Override
    public void close() {
    }
}
