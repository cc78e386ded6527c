import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The Java consumer and admin client against groupcoord serve: two consumers form a group
 * over TOPIC and share its partitions, one commits and reads its offset back, the group is
 * listed, described, its offsets listed, then (once the consumers closed) deleted. Prints one
 * line per fact the Python test checks. The data-plane modes (produce, consume, tail, offsets)
 * are {@link DataClient}'s.
 *
 * Usage: JavaClient BOOTSTRAP GROUP TOPIC
 *        JavaClient produce|consume|tail|offsets ARGS...
 *        JavaClient topics BOOTSTRAP TOPIC ({@link TopicAdminClient})
 *        JavaClient member ARGS... (a consumer-protocol member, {@link GroupMember})
 */
public final class JavaClient {
    public static void main(String[] args) throws Exception {
        if (DataClient.MODES.contains(args[0])) {
            DataClient.main(args);
        } else if (args[0].equals("member")) {
            GroupMember.main(args);
        } else if (args[0].equals("topics")) {
            TopicAdminClient.main(java.util.Arrays.copyOfRange(args, 1, args.length));
        } else {
            group(args[0], args[1], args[2]);
        }
    }

    private static void group(String bootstrap, String group, String topic) throws Exception {
        List<KafkaConsumer<byte[], byte[]>> consumers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, "java-" + i);
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
            consumer.subscribe(List.of(topic));
            consumers.add(consumer);
        }
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline) {
            for (KafkaConsumer<byte[], byte[]> c : consumers) c.poll(Duration.ofMillis(100));
            if (consumers.stream().allMatch(c -> !c.assignment().isEmpty())
                    && consumers.stream().mapToInt(c -> c.assignment().size()).sum() == partitions(consumers.get(0), topic)) {
                break;
            }
        }
        for (KafkaConsumer<byte[], byte[]> c : consumers) {
            List<Integer> ps = c.assignment().stream().map(TopicPartition::partition).sorted().toList();
            System.out.println("ASSIGNMENT " + ps);
        }
        KafkaConsumer<byte[], byte[]> first = consumers.get(0);
        TopicPartition owned = first.assignment().iterator().next();
        first.commitSync(Map.of(owned, new OffsetAndMetadata(42, "from java")));
        OffsetAndMetadata committed = first.committed(Set.of(owned)).get(owned);
        System.out.println("COMMITTED " + owned.partition() + " " + committed.offset() + " " + committed.metadata());
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.listGroups().all().get().forEach(g ->
                System.out.println("LISTED " + g.groupId() + " " + g.groupState().orElseThrow()));
            var description = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
            System.out.println("DESCRIBED " + description.groupState() + " " + description.members().size()
                + " " + description.partitionAssignor());
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().forEach((tp, o) ->
                System.out.println("OFFSET " + tp.partition() + " " + o.offset()));
            for (KafkaConsumer<byte[], byte[]> c : consumers) c.close();
            admin.deleteConsumerGroups(List.of(group)).all().get();
            System.out.println("DELETED " + admin.listGroups().all().get().stream()
                .noneMatch(g -> g.groupId().equals(group)));
        }
    }

    private static int partitions(KafkaConsumer<byte[], byte[]> consumer, String topic) {
        return consumer.partitionsFor(topic).size();
    }
}
