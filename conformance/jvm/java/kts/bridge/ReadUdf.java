package kts.bridge;

import org.apache.spark.sql.api.java.UDF1;

/** Spark SQL UDF: read a record set as a consumer does (RecordsBridge.read). */
public final class ReadUdf implements UDF1<byte[], byte[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public byte[] call(byte[] records) {
        return records == null ? null : RecordsBridge.read(records);
    }
}
