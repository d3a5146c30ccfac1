package kts.kafka;

import java.util.Collections;
import java.util.Map;

import kafka.network.RequestChannel;
import kafka.security.auth.Acl;
import kafka.security.auth.Authorizer;
import kafka.security.auth.Operation;
import kafka.security.auth.Resource;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * {@link DatingAuthorizer} for the releases before Kafka 2.4, through their Scala authorizer interface
 * (kafka.security.auth.Authorizer, 0.9 to 2.8): allows every request, and dates a topic's segment files
 * ({@link FileDates}) when Kafka asks to describe the topic. That interface is not told the request, so this dates
 * on every Describe of a topic (Metadata's too, not ListOffsets' only): KafkaApis asks it about a ListOffsets
 * request's partitions before it looks a time up, on the same thread. The launcher is compiled with this class only
 * against releases that have that interface and not the newer one.
 */
public final class LegacyDatingAuthorizer implements Authorizer {

    @Override
    public void configure(Map<String, ?> configs) {
    }

    @Override
    public boolean authorize(RequestChannel.Session session, Operation operation, Resource resource) {
        FileDates dates = FileDates.installed;
        if (dates != null && "Describe".equals(operation.name()) && "Topic".equals(resource.resourceType().name())) {
            try {
                dates.date(Collections.singleton(resource.name()));
            } catch (Exception e) {
                System.err.println("kts: dating segment files failed: " + e);
            }
        }
        return true;
    }

    @Override
    public void addAcls(scala.collection.immutable.Set<Acl> acls, Resource resource) {
        throw new UnsupportedOperationException("the conformance suite's broker keeps no ACLs");
    }

    @Override
    public boolean removeAcls(scala.collection.immutable.Set<Acl> acls, Resource resource) {
        return false;
    }

    @Override
    public boolean removeAcls(Resource resource) {
        return false;
    }

    @Override
    public scala.collection.immutable.Set<Acl> getAcls(Resource resource) {
        return none(scala.collection.immutable.Set$.MODULE$.empty());
    }

    @Override
    public scala.collection.immutable.Map<Resource, scala.collection.immutable.Set<Acl>> getAcls(
            KafkaPrincipal principal) {
        return none(scala.collection.immutable.Map$.MODULE$.empty());
    }

    @Override
    public scala.collection.immutable.Map<Resource, scala.collection.immutable.Set<Acl>> getAcls() {
        return none(scala.collection.immutable.Map$.MODULE$.empty());
    }

    @Override
    public void close() {
    }

    /** An empty Scala collection as the element types the interface names (Scala's empty() has none). */
    @SuppressWarnings("unchecked")
    private static <T> T none(Object empty) {
        return (T) empty;
    }
}
