package kts.bridge;

import org.apache.spark.sql.api.java.UDF3;

/** Spark SQL UDF: down-convert a record set (RecordsBridge.downConvert): records, to magic, first offset. */
public final class DownConvertUdf implements UDF3<byte[], Integer, Long, byte[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public byte[] call(byte[] records, Integer toMagic, Long firstOffset) {
        if (records == null || toMagic == null || firstOffset == null)
            return null;
        return RecordsBridge.downConvert(records, toMagic, firstOffset);
    }
}
