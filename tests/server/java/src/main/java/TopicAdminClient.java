import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.Uuid;

/**
 * The Java admin client administering topics: creates one (with a config), fails to create it
 * again or with three replicas, grows it, describes it, the cluster and the log directories,
 * deletes it by id and fails to delete __consumer_offsets. Prints one line per fact the Python
 * test checks; an expected failure prints the exception's class.
 *
 * Usage: JavaClient topics BOOTSTRAP TOPIC
 */
public final class TopicAdminClient {
    public static void main(String[] args) throws Exception {
        String topic = args[1];
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        try (Admin admin = Admin.create(p)) {
            CreateTopicsResult created = admin.createTopics(List.of(
                    new NewTopic(topic, 2, (short) 1).configs(Map.of("retention.ms", "60000"))));
            created.all().get();
            Uuid id = created.topicId(topic).get();
            System.out.println("CREATED " + created.numPartitions(topic).get() + " "
                    + created.replicationFactor(topic).get() + " "
                    + created.config(topic).get().get("retention.ms").value());
            System.out.println("AGAIN " + failure(() -> admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get()));
            System.out.println("REPLICAS " + failure(() -> admin.createTopics(List.of(new NewTopic(topic + "-3", 1, (short) 3))).all().get()));
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all().get();
            System.out.println("SHRINK " + failure(() -> admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get()));
            TopicDescription described = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            System.out.println("DESCRIBED " + described.partitions().size() + " " + described.topicId().equals(id)
                    + " " + described.partitions().get(0).replicas().size());
            DescribeClusterResult cluster = admin.describeCluster();
            int node = cluster.controller().get().id();
            System.out.println("CLUSTER " + cluster.nodes().get().size() + " " + node + " " + cluster.clusterId().get());
            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(node)).allDescriptions().get().get(node);
            for (Map.Entry<String, LogDirDescription> dir : dirs.entrySet()) {
                long partitions = dir.getValue().replicaInfos().keySet().stream().filter(tp -> tp.topic().equals(topic)).count();
                System.out.println("LOGDIR " + dir.getKey() + " " + partitions + " " + (dir.getValue().totalBytes().orElse(-1) > 0));
            }
            admin.deleteTopics(TopicCollection.ofTopicIds(List.of(id))).all().get();
            Set<String> names = admin.listTopics().names().get();
            System.out.println("DELETED " + !names.contains(topic));
            System.out.println("INTERNAL " + failure(() -> admin.deleteTopics(List.of("__consumer_offsets")).all().get()));
        }
    }

    interface Call {
        void run() throws Exception;
    }

    private static String failure(Call call) throws Exception {
        try {
            call.run();
            return "none";
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        }
    }
}
