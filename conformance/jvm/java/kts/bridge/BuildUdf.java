package kts.bridge;

import org.apache.spark.sql.api.java.UDF1;

/** Spark SQL UDF: build a batch from a spec (RecordsBridge.build). */
public final class BuildUdf implements UDF1<byte[], byte[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public byte[] call(byte[] spec) {
        return spec == null ? null : RecordsBridge.build(spec);
    }
}
