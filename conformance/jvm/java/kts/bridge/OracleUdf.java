package kts.bridge;

import org.apache.spark.sql.api.java.UDF1;

/** Spark SQL UDF: one differential case (RecordsBridge.oracle), run in an executor's JVM. */
public final class OracleUdf implements UDF1<byte[], byte[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public byte[] call(byte[] request) {
        return request == null ? null : RecordsBridge.oracle(request);
    }
}
